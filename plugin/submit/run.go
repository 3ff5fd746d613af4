package submit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sparkplug-io/sparkplug/plugin/setting"
)

// Options are the plugin-wide settings of the spark-submit launcher.
// cmd/sparkplug fills them from serve's flags and environment.
type Options struct {
	// SparkHome is the Spark distribution whose bin/spark-submit runs;
	// empty means the launcher is not available.
	SparkHome string
	// Timeout bounds one spark-submit run; it is killed after it.
	Timeout time.Duration
	// RequestTimeout is spark-submit's client timeout against the API
	// server (KUBERNETES_REQUEST_TIMEOUT and
	// spark.kubernetes.submission.connectionTimeout and requestTimeout);
	// 0 keeps Spark's own default.
	RequestTimeout time.Duration
	// Client is how spark-submit reaches the API server (NewClient).
	Client Client
	// Env are the variables of the plugin's environment spark-submit
	// gets (InheritedEnv, read by cmd/sparkplug).
	Env map[string]string
	// TempDir holds each submission's files while it runs, and is
	// spark-submit's TMPDIR and java.io.tmpdir; empty: the system's
	// (os.TempDir), or, where that is not writable, /dev/shm (Validate).
	TempDir string
}

// fallbackTempDirs are where spark-submit's files go when the system's
// temporary directory is not writable: the sidecar runs with a read-only
// root filesystem and Argo mounts no writable volume into it, but every
// container runtime gives a container a writable tmpfs at /dev/shm.
var fallbackTempDirs = []string{"/dev/shm"}

// writableTempDir is dir if a directory can be made in it, else (dir
// empty) the first of the system's temporary directory and
// fallbackTempDirs where one can.
func writableTempDir(dir string) (string, error) {
	candidates := append([]string{os.TempDir()}, fallbackTempDirs...)
	if dir != "" {
		candidates = []string{dir}
	}
	var errs []string
	for _, c := range candidates {
		probe, err := os.MkdirTemp(c, ".sparkplug-probe-")
		if err == nil {
			_ = os.Remove(probe)
			return c, nil
		}
		errs = append(errs, err.Error())
	}
	return "", fmt.Errorf("no writable directory for spark-submit's files (%s): give the sidecar a writable TMPDIR", strings.Join(errs, "; "))
}

// DefaultTimeout bounds a spark-submit run when Options.Timeout is 0.
const DefaultTimeout = 2 * time.Minute

// DefaultRequestTimeout is spark-submit's timeout against the API server
// unless told otherwise (Options.RequestTimeout; 0 keeps Spark's own).
const DefaultRequestTimeout = 30 * time.Second

// Validate fills defaults and rejects nonsense; with a SparkHome, its
// bin/spark-submit must be an executable file.
func (o *Options) Validate() error {
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Timeout < 0 {
		return setting.Errorf("submit-timeout", "must be positive, got %s", o.Timeout)
	}
	if o.RequestTimeout < 0 {
		return setting.Errorf("kubernetes-request-timeout", "must not be negative, got %s", o.RequestTimeout)
	}
	if o.RequestTimeout >= o.Timeout {
		return setting.Errorf("kubernetes-request-timeout", "%s must be shorter than submit-timeout (%s): spark-submit could not retry a slow request", o.RequestTimeout, o.Timeout)
	}
	if o.SparkHome == "" {
		return nil
	}
	dir, err := writableTempDir(o.TempDir)
	if err != nil {
		return setting.Errorf("spark-home", "%s", err)
	}
	o.TempDir = dir
	path := o.Program()
	fi, err := os.Stat(path)
	if err != nil {
		return setting.Errorf("spark-home", "%s: %s", o.SparkHome, err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return setting.Errorf("spark-home", "%s: %s is not an executable file", o.SparkHome, path)
	}
	return nil
}

// Program is the spark-submit the launcher runs.
func (o *Options) Program() string {
	return filepath.Join(o.SparkHome, "bin", "spark-submit")
}

// Environ is spark-submit's whole environment: the inherited variables,
// SPARK_HOME, the kubeconfig and the request timeout; nothing else.
func (o *Options) Environ() []string {
	env := maps.Clone(o.Env)
	if env == nil {
		env = map[string]string{}
	}
	if env["PATH"] == "" {
		env["PATH"] = DefaultPath
	}
	env[EnvSparkHome] = o.SparkHome
	if o.Client.Kubeconfig != "" {
		env[EnvKubeconfig] = o.Client.Kubeconfig
	}
	if o.RequestTimeout > 0 {
		env[EnvRequestTimeout] = strconv.FormatInt(o.RequestTimeout.Milliseconds(), 10)
	}
	if o.TempDir != "" {
		// The JVM takes java.io.tmpdir from neither TMPDIR nor the
		// environment: spark-class passes SPARK_SUBMIT_OPTS to it.
		env["TMPDIR"] = o.TempDir
		env[EnvSubmitOpts] = "-Djava.io.tmpdir=" + o.TempDir
	}
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// Result is how one spark-submit run ended.
type Result struct {
	// ExitCode is the process's exit status; -1 when it did not exit by
	// itself (killed after the timeout, or never started).
	ExitCode int
	// Stdout and Stderr are the ends of its output (at most
	// outputLimit bytes each).
	Stdout, Stderr string
	// Started: the process ran (else Err says why not).
	Started bool
	// TimedOut: the run was killed when its timeout ran out.
	TimedOut bool
	// Err is why it could not run at all (no such file, ...), or nil.
	Err error
	// Took is how long it ran.
	Took time.Duration
}

// OK says spark-submit ran and exited 0.
func (r Result) OK() bool { return r.Started && r.Err == nil && !r.TimedOut && r.ExitCode == 0 }

// outputLimit is how much of each output stream a Result keeps: the end,
// where a JVM's last exception is.
const outputLimit = 64 << 10

// waitDelay is how long Run waits for the output pipes after the process
// ends or is killed (a grandchild may hold them open).
const waitDelay = 5 * time.Second

// Run execs program with args and env, never through a shell, and kills
// it (its whole process group: spark-submit is a script that starts a
// JVM) when ctx ends or timeout runs out.
func Run(ctx context.Context, program string, args, env []string, timeout time.Duration) Result {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.Env = env
	stdout, stderr := &tail{limit: outputLimit}, &tail{limit: outputLimit}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = waitDelay
	inOwnGroup(cmd)

	start := time.Now()
	err := cmd.Run()
	r := Result{ExitCode: -1, Took: time.Since(start), Stdout: stdout.String(), Stderr: stderr.String(), Started: cmd.ProcessState != nil}
	if cmd.ProcessState != nil && cmd.ProcessState.Exited() {
		r.ExitCode = cmd.ProcessState.ExitCode()
	}
	var exit *exec.ExitError
	switch {
	case !r.Started:
		r.Err = err
	case errors.Is(ctx.Err(), context.DeadlineExceeded) && r.ExitCode != 0:
		r.TimedOut = true
	case err == nil, errors.As(err, &exit) && r.ExitCode > 0:
	case errors.Is(err, exec.ErrWaitDelay):
		// It exited; a leftover child kept the output open.
	default:
		r.Err = err
	}
	return r
}

// tail keeps the last limit bytes written to it.
type tail struct {
	mu    sync.Mutex
	limit int
	buf   []byte
	cut   bool
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.limit; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cut {
		// Drop the partial first line.
		if i := slices.Index(t.buf, '\n'); i >= 0 {
			return string(t.buf[i+1:])
		}
	}
	return string(t.buf)
}
