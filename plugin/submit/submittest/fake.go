// Package submittest gives tests a fake Spark distribution whose
// bin/spark-submit is plugin/submit/testdata/fakesubmit: it records its
// calls and does what a Config says (sleep, fail like a JVM, or create the
// driver pod as spark-submit would). No Spark nor Java is installable in
// the test environment.
package submittest

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Config is what the fake spark-submit does, written as its fake.json.
type Config struct {
	// Record is a file each call appends its arguments and environment to.
	Record string `json:"record,omitempty"`
	// Sleep is a Go duration the fake sleeps first.
	Sleep string `json:"sleep,omitempty"`
	// ExitCode and Stderr: exit with the code after printing Stderr.
	ExitCode int    `json:"exitCode,omitempty"`
	Stderr   string `json:"stderr,omitempty"`
	// Create the driver pod through $KUBECONFIG, as spark-submit would.
	Create bool `json:"create,omitempty"`
}

// SparkHome makes a new directory with the fake as bin/spark-submit,
// writes c as its fake.json, and returns the directory.
func SparkHome(t testing.TB, c Config) string {
	t.Helper()
	bin, err := binary()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	if err := os.Mkdir(filepath.Join(home, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, filepath.Join(home, "bin", "spark-submit")); err != nil {
		t.Fatal(err)
	}
	Configure(t, home, c)
	return home
}

var (
	buildOnce sync.Once
	built     string
	buildErr  error
)

// binary builds the fake once per process into the user's cache
// (~/.cache/sparkplug/fakesubmit, where the project keeps its test tools),
// named by a hash of its source, the module's requirements and the Go
// version, so later test runs reuse it.
func binary() (string, error) {
	buildOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		src := filepath.Join(filepath.Dir(file), "..", "testdata", "fakesubmit")
		root := filepath.Join(filepath.Dir(file), "..", "..", "..")
		h := sha256.New()
		for _, f := range []string{filepath.Join(src, "main.go"), filepath.Join(root, "go.mod"), filepath.Join(root, "go.sum")} {
			raw, err := os.ReadFile(f)
			if err != nil {
				buildErr = err
				return
			}
			h.Write(raw)
		}
		h.Write([]byte(runtime.Version() + runtime.GOOS + runtime.GOARCH))
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		dir := filepath.Join(cache, "sparkplug", "fakesubmit")
		built = filepath.Join(dir, hex.EncodeToString(h.Sum(nil))[:16])
		if _, err := os.Stat(built); err == nil {
			return
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			buildErr = err
			return
		}
		// Builds of older sources go (not this one's, which another test
		// process may be writing).
		if old, err := filepath.Glob(filepath.Join(dir, "*")); err == nil {
			for _, f := range old {
				if !strings.HasPrefix(f, built) {
					_ = os.Remove(f)
				}
			}
		}
		tmp := fmt.Sprintf("%s.%d", built, os.Getpid())
		cmd := exec.Command("go", "build", "-o", tmp, ".")
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build the fake spark-submit: %w\n%s", err, out)
			return
		}
		buildErr = os.Rename(tmp, built)
	})
	return built, buildErr
}

// Configure rewrites the fake's fake.json.
func Configure(t testing.TB, home string, c Config) {
	t.Helper()
	raw, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "fake.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Call is one recorded run of the fake.
type Call struct {
	Args []string `json:"args"`
	Env  []string `json:"env"`
}

// Conf is the value of a --conf key of the call, and whether it was given.
func (c Call) Conf(key string) (string, bool) {
	for i := 0; i+1 < len(c.Args); i++ {
		if c.Args[i] == "--conf" {
			if k, v, _ := strings.Cut(c.Args[i+1], "="); k == key {
				return v, true
			}
		}
	}
	return "", false
}

// Calls reads the calls recorded in file (none when it does not exist).
func Calls(t testing.TB, file string) []Call {
	t.Helper()
	f, err := os.Open(file)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var calls []Call
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var c Call
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		calls = append(calls, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return calls
}
