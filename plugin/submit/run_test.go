package submit_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkplug-io/sparkplug/plugin/setting"
	"github.com/sparkplug-io/sparkplug/plugin/submit"
	"github.com/sparkplug-io/sparkplug/plugin/submit/submittest"
)

// One fake Spark distribution serves the cases, reconfigured for each.
func TestRun(t *testing.T) {
	record := filepath.Join(t.TempDir(), "calls.jsonl")
	home := submittest.SparkHome(t, submittest.Config{Record: record})
	o := submit.Options{
		SparkHome: home, RequestTimeout: 20 * time.Second,
		Client: submit.Client{Kubeconfig: "/run/kubeconfig"},
		Env:    map[string]string{"PATH": "/usr/bin:/bin", "JAVA_HOME": "/opt/java"},
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	args := []string{"--master", "k8s://https://x", "--conf", "spark.a=b c", "local:///a.jar", "$(touch /tmp/pwned)", "a;b"}

	t.Run("argv as given, no shell, minimal environment", func(t *testing.T) {
		t.Setenv("SPARKPLUG_SECRET_IN_PLUGIN_ENV", "x")
		r := submit.Run(context.Background(), o.Program(), args, o.Environ(), o.Timeout)
		if !r.OK() || r.ExitCode != 0 {
			t.Fatalf("result %+v", r)
		}
		calls := submittest.Calls(t, record)
		if len(calls) != 1 {
			t.Fatalf("%d calls, want 1", len(calls))
		}
		if !slices.Equal(calls[0].Args, args) {
			t.Errorf("argv %q, want %q", calls[0].Args, args)
		}
		env := slices.Sorted(slices.Values(calls[0].Env))
		want := []string{"JAVA_HOME=/opt/java", "KUBECONFIG=/run/kubeconfig", "KUBERNETES_REQUEST_TIMEOUT=20000", "PATH=/usr/bin:/bin", "SPARK_HOME=" + home,
			"SPARK_SUBMIT_OPTS=-Djava.io.tmpdir=" + o.TempDir, "TMPDIR=" + o.TempDir}
		if !slices.Equal(env, want) {
			t.Errorf("environment %q, want %q", env, want)
		}
	})

	t.Run("exit code and stderr", func(t *testing.T) {
		submittest.Configure(t, home, submittest.Config{ExitCode: 3, Stderr: "INFO x\nException in thread \"main\" java.lang.IllegalStateException: nope\n\tat a.b(C.java:1)\n"})
		r := submit.Run(context.Background(), o.Program(), args, o.Environ(), o.Timeout)
		if r.OK() || r.ExitCode != 3 || r.TimedOut || r.Err != nil || !r.Started {
			t.Fatalf("result %+v, want exit 3", r)
		}
		if got, want := submit.Message(r, o.Timeout), `spark-submit exited 3: Exception in thread "main" java.lang.IllegalStateException: nope`; got != want {
			t.Errorf("message %q, want %q", got, want)
		}
	})

	t.Run("killed after the timeout", func(t *testing.T) {
		submittest.Configure(t, home, submittest.Config{Sleep: "1m"})
		start := time.Now()
		r := submit.Run(context.Background(), o.Program(), args, o.Environ(), 500*time.Millisecond)
		if took := time.Since(start); took > 10*time.Second {
			t.Fatalf("Run returned after %s, long after its timeout", took)
		}
		if !r.TimedOut || r.OK() || r.ExitCode != -1 {
			t.Fatalf("result %+v, want timed out", r)
		}
		if got := submit.Message(r, 500*time.Millisecond); !strings.HasPrefix(got, "spark-submit did not finish within 500ms") {
			t.Errorf("message %q", got)
		}
	})

	t.Run("a cancelled context stops it", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		r := submit.Run(ctx, o.Program(), args, o.Environ(), time.Minute)
		if r.OK() {
			t.Fatalf("result %+v, want stopped", r)
		}
	})

	t.Run("no such program", func(t *testing.T) {
		r := submit.Run(context.Background(), filepath.Join(t.TempDir(), "spark-submit"), args, o.Environ(), o.Timeout)
		if r.Started || r.Err == nil || r.OK() {
			t.Fatalf("result %+v, want not started", r)
		}
		if got := submit.Message(r, o.Timeout); !strings.HasPrefix(got, "cannot run spark-submit: ") {
			t.Errorf("message %q", got)
		}
	})
}

func TestOptionsValidate(t *testing.T) {
	notExecutable := t.TempDir()
	if err := os.MkdirAll(filepath.Join(notExecutable, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notExecutable, "bin", "spark-submit"), []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		o       submit.Options
		wantErr string
	}{
		{"defaults without spark-submit", submit.Options{}, ""},
		{"negative timeout", submit.Options{Timeout: -time.Second}, "submit-timeout: must be positive"},
		{"negative request timeout", submit.Options{RequestTimeout: -time.Second}, "kubernetes-request-timeout: must not be negative"},
		{"request timeout not under the submit timeout", submit.Options{Timeout: time.Minute, RequestTimeout: time.Minute}, "must be shorter than submit-timeout"},
		{"no spark-submit in the spark home", submit.Options{SparkHome: t.TempDir()}, "no such file"},
		{"spark-submit not executable", submit.Options{SparkHome: notExecutable}, "is not an executable file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.Validate()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Validate: %v, want an error with %q", err, tc.wantErr)
			case tc.wantErr == "" && tc.o.Timeout != submit.DefaultTimeout:
				t.Fatalf("timeout %s, want the default %s", tc.o.Timeout, submit.DefaultTimeout)
			}
		})
	}
}

func TestEnviron(t *testing.T) {
	o := submit.Options{SparkHome: "/opt/spark"}
	if got, want := o.Environ(), []string{"PATH=" + submit.DefaultPath, "SPARK_HOME=/opt/spark"}; !slices.Equal(got, want) {
		t.Errorf("Environ() = %q, want %q: no kubeconfig nor request timeout unless set", got, want)
	}
}

// With the system's temporary directory not writable (the sidecar's
// read-only root filesystem), spark-submit's files go to the first
// writable fallback, which is also its TMPDIR and java.io.tmpdir.
func TestValidateFindsAWritableTempDir(t *testing.T) {
	home := submittest.SparkHome(t, submittest.Config{})
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", notADir) // os.TempDir; MkdirTemp fails even as root
	shm := t.TempDir()
	submit.SetFallbackTempDirs(t, filepath.Join(notADir, "x"), shm)

	o := submit.Options{SparkHome: home}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if o.TempDir != shm {
		t.Errorf("TempDir %q, want the writable fallback %q", o.TempDir, shm)
	}
	env := o.Environ()
	for _, want := range []string{"TMPDIR=" + shm, "SPARK_SUBMIT_OPTS=-Djava.io.tmpdir=" + shm} {
		if !slices.Contains(env, want) {
			t.Errorf("environment %q lacks %s", env, want)
		}
	}

	submit.SetFallbackTempDirs(t)
	o = submit.Options{SparkHome: home}
	err := o.Validate()
	var se *setting.Error
	if !errors.As(err, &se) || se.Name != "spark-home" || !strings.Contains(err.Error(), "no writable directory for spark-submit's files") {
		t.Errorf("no writable directory at all: %v, want a spark-home refusal saying so", err)
	}
}
