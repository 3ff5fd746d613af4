package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	filePID = "pid"
	fileLog = "demo.log"
	// downWait bounds how long `demo down` waits for the teardown.
	downWait = time.Minute
)

// startKept starts the demo as a background process of its own session
// (so it outlives this one, and the processes it starts outlive it only
// until it stops them), follows its log until the demo is done, and leaves
// it running.
func startKept(o options, out io.Writer) (int, error) {
	if pid, ok := runningPID(o.stateDir); ok {
		return 1, fmt.Errorf("a kept demo is running (pid %d): make demo-down first", pid)
	}
	if err := os.MkdirAll(o.stateDir, 0o755); err != nil {
		return 1, err
	}
	logPath := filepath.Join(o.stateDir, fileLog)
	log, err := os.Create(logPath)
	if err != nil {
		return 1, err
	}
	defer log.Close()
	self, err := os.Executable()
	if err != nil {
		return 1, err
	}
	args := append([]string{"--daemon"}, os.Args[1:]...)
	cmd := exec.Command(self, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 1, fmt.Errorf("start the demo in the background: %w", err)
	}
	pid := cmd.Process.Pid
	if err := os.WriteFile(filepath.Join(o.stateDir, filePID), []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		return 1, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return followLog(logPath, exited, out)
}

// followLog copies the kept demo's log to out until the demo says it is
// done (its exit code) or exits.
func followLog(path string, exited <-chan error, out io.Writer) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 1, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var partial string
	for {
		line, err := r.ReadString('\n')
		partial += line
		if err == nil {
			if code, ok := strings.CutPrefix(strings.TrimSpace(partial), markerDone); ok {
				n, _ := strconv.Atoi(code)
				return n, nil
			}
			fmt.Fprint(out, partial)
			partial = ""
			continue
		}
		if !errors.Is(err, io.EOF) {
			return 1, err
		}
		select {
		case werr := <-exited:
			rest, _ := io.ReadAll(r)
			fmt.Fprint(out, partial+string(rest))
			return 1, fmt.Errorf("the demo exited before it finished: %v", werr)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// down stops a kept demo: SIGTERM, then it tears its environment down.
func down(o options, out io.Writer) (int, error) {
	pid, ok := runningPID(o.stateDir)
	if !ok {
		fmt.Fprintln(out, "no kept demo is running")
		_ = os.Remove(filepath.Join(o.stateDir, filePID))
		return 0, nil
	}
	fmt.Fprintf(out, "stopping the demo (pid %d)...\n", pid)
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return 1, fmt.Errorf("stop pid %d: %w", pid, err)
	}
	deadline := time.Now().Add(downWait)
	for alive(pid) {
		if time.Now().After(deadline) {
			return 1, fmt.Errorf("pid %d did not stop within %v (its log: %s)", pid, downWait, filepath.Join(o.stateDir, fileLog))
		}
		time.Sleep(200 * time.Millisecond)
	}
	_ = os.Remove(filepath.Join(o.stateDir, filePID))
	fmt.Fprintln(out, "stopped")
	return 0, nil
}

// runningPID returns the pid of a kept demo that is still alive.
func runningPID(stateDir string) (int, bool) {
	b, err := os.ReadFile(filepath.Join(stateDir, filePID))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, alive(pid)
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
