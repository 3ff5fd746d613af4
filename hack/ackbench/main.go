// Command ackbench measures the acknowledger (cmd/sparkplug-ack) against
// its goals (issue #33: at most 8 MiB resident, an image of at most 5 MB):
//
//	go run ./hack/ackbench -binary bin/linux-amd64/sparkplug-ack -image bin/sparkplug-ack-image.tar \
//	    -bare bin/linux-amd64/ackbench-bare
//
// It prints the binary's size and build settings, and the image's size
// both ways: its compressed layers (what a registry shows and a node
// pulls, read from the image tarball's manifest) and the same layers
// uncompressed (what `docker images` shows and the node's disk holds).
// Then it starts the binary on a loopback port with a token file and
// reads its resident memory (VmRSS in /proc/PID/status, Linux only)
// idle, and after -requests template.execute calls (spark templates and
// other plugins' templates, alternating) sent by -workers clients at
// once, as the agent's workers send them. With -bare it measures a bare
// net/http server (hack/ackbench/bare, built the same way) the same way,
// under the acknowledger's runtime settings: the floor of any Go HTTP
// server, which the acknowledger's figures are read against. `make
// bench-ack` runs it.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ackbench:", err)
		os.Exit(1)
	}
}

const (
	sparkBody = `{"workflow":{"metadata":{"name":"wf","namespace":"ns","uid":"uid-1"}},"template":{"name":"pi","plugin":{"spark":{"type":"Scala","mainClass":"org.apache.spark.examples.SparkPi"}}}}`
	otherBody = `{"workflow":{"metadata":{"name":"wf","namespace":"ns","uid":"uid-1"}},"template":{"name":"hi","plugin":{"slack":{"text":"hi"}}}}`
)

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("ackbench", flag.ContinueOnError)
	binary := fs.String("binary", "bin/linux-amd64/sparkplug-ack", "the acknowledger binary (built for this machine)")
	image := fs.String("image", "", "the acknowledger's image tarball (make ack-image); empty: no image size")
	bare := fs.String("bare", "", "a bare net/http server (hack/ackbench/bare) built as the acknowledger is; empty: not measured")
	requests := fs.Int("requests", 10000, "template.execute calls to send")
	workers := fs.Int("workers", 16, "clients sending at once (the agent's default workers)")
	peers := fs.Int("peers", 3, "idle copies of the binary started at the end, to read the process's proportional share of the pages they share")
	settle := fs.Duration("settle", 5*time.Second, "how long after the requests resident memory is read again (the Go runtime returns freed memory in the background)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := describe(stdout, *binary); err != nil {
		return err
	}
	if *image != "" {
		compressed, uncompressed, err := imageSize(*image)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "image %s: compressed layers %s (%.2f MB), uncompressed %s (%.2f MB)\n",
			*image, mib(compressed), float64(compressed)/1e6, mib(uncompressed), float64(uncompressed)/1e6)
	}
	m := measurement{requests: *requests, workers: *workers, peers: *peers, settle: *settle}
	if err := m.run(stdout, *binary, nil); err != nil {
		return err
	}
	if *bare == "" {
		return nil
	}
	fmt.Fprintln(stdout, "\nthe floor: a bare net/http server, with the acknowledger's runtime settings (GOMAXPROCS=1 GOGC=25)")
	if err := describe(stdout, *bare); err != nil {
		return err
	}
	return m.run(stdout, *bare, []string{"GOMAXPROCS=1", "GOGC=25"})
}

// describe prints a binary's size and the settings it was built with.
func describe(stdout io.Writer, binary string) error {
	fi, err := os.Stat(binary)
	if err != nil {
		return err
	}
	var settings []string
	if bi, err := buildinfo.ReadFile(binary); err == nil {
		settings = append(settings, bi.GoVersion)
		for _, s := range bi.Settings {
			switch s.Key {
			case "-tags", "-ldflags", "-trimpath", "CGO_ENABLED", "GOARCH", "GOEXPERIMENT":
				settings = append(settings, s.Key+"="+s.Value)
			}
		}
	}
	fmt.Fprintf(stdout, "binary %s: %s (%.2f MB), %s\n", binary, mib(fi.Size()), float64(fi.Size())/1e6, strings.Join(settings, " "))
	return nil
}

// measurement is how a server's memory is measured: the calls sent, how
// long after them it is read again, and how many idle copies of the
// binary run beside it for its proportional share.
type measurement struct {
	requests, workers, peers int
	settle                   time.Duration
}

// run starts binary, with env added to this process's environment, and
// prints its resident memory idle, right after the calls and settle
// later; then, with m.peers more idle copies of it running, its
// proportional share (Pss), as on a node running many agent pods of one
// image, which share the binary's pages in the page cache.
func (m measurement) run(stdout io.Writer, binary string, env []string) error {
	dir, err := os.MkdirTemp("", "ackbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("bench-token\n"), 0o600); err != nil {
		return err
	}
	cmd, addr, err := start(binary, token, env)
	if err != nil {
		return err
	}
	defer stop(cmd)
	url := "http://" + addr + "/api/v1/template.execute"
	time.Sleep(time.Second)
	idle, err := status(cmd.Process.Pid)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "resident idle: %s\n", resident(idle))

	began := time.Now()
	failed, err := load(url, m.requests, m.workers)
	if err != nil {
		return err
	}
	took := time.Since(began)
	after, err := status(cmd.Process.Pid)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d requests by %d clients in %s (%.0f/s, %d not answered as expected)\n", m.requests, m.workers, took.Round(time.Millisecond), float64(m.requests)/took.Seconds(), failed)
	fmt.Fprintf(stdout, "resident after: %s\n", resident(after))
	time.Sleep(m.settle)
	settled, err := status(cmd.Process.Pid)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "resident %s after: %s\n", m.settle, resident(settled))
	if failed > 0 {
		return fmt.Errorf("%d requests were not answered as expected", failed)
	}
	if m.peers == 0 {
		return nil
	}
	for range m.peers {
		peer, _, err := start(binary, token, env)
		if err != nil {
			return err
		}
		defer stop(peer)
	}
	time.Sleep(time.Second)
	share, err := proportional(cmd.Process.Pid)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "with %d more copies of the binary running idle: proportional share (Pss) %s: anonymous %s, file %s\n",
		m.peers, mib(share["Pss"]), mib(share["Pss_Anon"]), mib(share["Pss_File"]))
	return nil
}

// start runs binary on a free loopback port with the token file and env,
// and waits until it answers.
func start(binary, token string, env []string) (*exec.Cmd, string, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	cmd := exec.Command(binary, "--addr", addr, "--token-file", token, "--log-level", "warn")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	if err := waitUp("http://" + addr + "/healthz"); err != nil {
		stop(cmd)
		return nil, "", err
	}
	return cmd, addr, nil
}

func stop(cmd *exec.Cmd) { _ = cmd.Process.Kill(); _ = cmd.Wait() }

// proportional reads the Pss fields of /proc/PID/smaps_rollup, in bytes:
// each page counted divided by the processes that map it.
func proportional(pid int) (map[string]int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return nil, fmt.Errorf("read the process's smaps_rollup (Linux only): %w", err)
	}
	return kiBFields(string(b), "Pss"), nil
}

// load sends n calls from workers clients, alternating spark templates
// and other templates, and counts the replies that are not the expected
// acknowledgement or {}.
func load(url string, n, workers int) (int64, error) {
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}, Timeout: 30 * time.Second}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				body, want := sparkBody, `{"node":{},"requeue":"0s"}`
				if i%2 == 0 {
					body, want = otherBody, `{}`
				}
				req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer bench-token")
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					failed.Add(1)
					continue
				}
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || string(got) != want {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return failed.Load(), nil
}

// status reads the memory fields of /proc/PID/status, in bytes.
func status(pid int) (map[string]int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, fmt.Errorf("read the process status (Linux only): %w", err)
	}
	m := kiBFields(string(b), "Vm", "Rss")
	if m["VmRSS"] == 0 {
		return nil, errors.New("no VmRSS in the process status")
	}
	return m, nil
}

// kiBFields reads the "Key: N kB" lines of a /proc file whose key has
// one of prefixes, in bytes.
func kiBFields(text string, prefixes ...string) map[string]int64 {
	m := map[string]int64{}
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || !slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(k, p) }) {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 2 && f[1] == "kB" {
			if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
				m[k] = n << 10
			}
		}
	}
	return m
}

// imageSize sums the layer sizes the image tarball's manifest.json and
// blobs record (the compressed layers a node pulls), and the same layers
// uncompressed (the tar of the files, which the node unpacks).
func imageSize(path string) (compressed, uncompressed int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	type blob struct{ size, uncompressed int64 }
	blobs := map[string]blob{}
	var manifest []struct{ Layers []string }
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", path, err)
		}
		if hdr.Name == "manifest.json" {
			var buf bytes.Buffer
			if _, err := io.Copy(&buf, tr); err != nil {
				return 0, 0, err
			}
			if err := json.Unmarshal(buf.Bytes(), &manifest); err != nil {
				return 0, 0, fmt.Errorf("%s: manifest.json: %w", path, err)
			}
			continue
		}
		b := blob{size: hdr.Size, uncompressed: hdr.Size}
		if zr, err := gzip.NewReader(tr); err == nil {
			n, err := io.Copy(io.Discard, zr)
			if err != nil {
				return 0, 0, fmt.Errorf("%s: %s: %w", path, hdr.Name, err)
			}
			b.uncompressed = n
		}
		blobs[hdr.Name] = b
	}
	if len(manifest) != 1 {
		return 0, 0, fmt.Errorf("%s: %d images in manifest.json, want 1 (an image tarball from make ack-image)", path, len(manifest))
	}
	for _, l := range manifest[0].Layers {
		compressed += blobs[l].size
		uncompressed += blobs[l].uncompressed
	}
	return compressed, uncompressed, nil
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func waitUp(url string) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s did not answer within 10s", url)
}

// resident is VmRSS, its parts (anonymous memory: the heap and stacks;
// file: the binary's pages in use) and its peak, VmHWM.
func resident(m map[string]int64) string {
	return fmt.Sprintf("%s (VmRSS: anonymous %s, file %s), peak %s (VmHWM)", mib(m["VmRSS"]), mib(m["RssAnon"]), mib(m["RssFile"]), mib(m["VmHWM"]))
}

func mib(n int64) string { return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20)) }
