package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/sparkplug-io/sparkplug/plugin/sidecar"
)

// Every command answers --help on stdout, with its flags, and succeeds.
func TestEveryCommandHasHelp(t *testing.T) {
	var top bytes.Buffer
	if err := run([]string{"--help"}, &top, &bytes.Buffer{}); err != nil {
		t.Fatalf("sparkplug --help: %v", err)
	}
	for _, c := range commands() {
		if !strings.Contains(top.String(), c.name) {
			t.Errorf("sparkplug --help does not list %s", c.name)
		}
		var out bytes.Buffer
		if err := run([]string{c.name, "--help"}, &out, &bytes.Buffer{}); err != nil {
			t.Errorf("sparkplug %s --help: %v", c.name, err)
		}
		if !strings.Contains(out.String(), "Usage: sparkplug "+c.name) || !strings.Contains(out.String(), "--") {
			t.Errorf("sparkplug %s --help prints no usage and flags:\n%s", c.name, out.String())
		}
	}
}

func TestServeHelpListsItsFlags(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"serve", "--help"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"--addr", "--token-file", "--kubeconfig", "--pod-name", "--pod-namespace", "--resync", "--write-gap", "--workers", "--not-found-grace", "--metrics-addr"} {
		if !strings.Contains(out.String(), flag) {
			t.Errorf("serve --help lacks %s", flag)
		}
	}
}

// A bad setting is refused before anything listens, and the error names
// the flag to fix.
func TestServeRejectsBadOptionsBeforeListening(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--token-file", ""}, "--token-file: is required"},
		{[]string{"--resync", "-1s"}, "--resync: must not be negative, got -1s"},
		{[]string{"--pod-name", "agent", "--pod-namespace", ""}, "--pod-name: pod-name and pod-namespace are given together"},
		{[]string{"--log-format", "xml"}, "--log-format must be json or text"},
		{[]string{"--launcher", "spark-submit"}, "--launcher: spark-submit needs spark-home"},
		{[]string{"--ingress-class-name", "Nginx"}, `--ingress-class-name: "Nginx": is not an IngressClass name`},
		{[]string{"--submit-timeout", "-1s"}, "--submit-timeout: must be positive"},
		{[]string{"--progress-interval", "-30s"}, "--progress-interval: -30s: want 0 (off) or at least 1s"},
		{[]string{"--progress-interval", "500ms"}, "--progress-interval: 500ms: want 0 (off) or at least 1s"},
		{[]string{"--history-server-url", "spark-history:18080"}, `--history-server-url: "spark-history:18080": must be an absolute URL starting with http:// or https://`},
		{[]string{"--history-server-url", "https://spark-history.example.com?x=1"}, `--history-server-url: "https://spark-history.example.com?x=1": must not hold a query or a fragment`},
	} {
		err := run(append([]string{"serve"}, tc.args...), &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("serve %v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// --allowed-workload-priority-classes is a flag of serve and of the
// controller alike, its values checked before anything starts.
func TestServeAndControllerTakeTheWorkloadPriorityClasses(t *testing.T) {
	for _, cmd := range [][]string{{"serve"}, {"controller", "--namespaces", "jobs", "--leader-elect=false"}} {
		err := run(append(cmd, "--allowed-workload-priority-classes", "batch,High"), &bytes.Buffer{}, &bytes.Buffer{})
		if want := `--allowed-workload-priority-classes: "High" is not a WorkloadPriorityClass name`; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", cmd[0], err, want)
		}
	}
}

// The flags' defaults are the library's (sidecar.DefaultConfig), defined
// once.
func TestServeFlagDefaultsAreTheSidecars(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"serve", "--help"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	d := sidecar.DefaultConfig()
	for flag, want := range map[string]string{
		"--resync": d.Core.Resync.String(), "--write-gap": d.Core.WriteGap.String(),
		"--not-found-grace": d.Core.NotFoundGrace.String(), "--workers": strconv.Itoa(d.Core.Workers),
		"--submit-timeout":             d.Core.Submit.Timeout.String(),
		"--kubernetes-request-timeout": d.Core.Submit.RequestTimeout.String(), "--addr": d.Addr,
		"--progress-interval": d.Core.ProgressInterval.String(), "--interim-hold": d.Core.InterimHold.String(),
	} {
		line := ""
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.Contains(l, flag+" ") {
				line = l
			}
		}
		if !strings.Contains(line, "(default "+want) && !strings.Contains(line, `(default "`+want) {
			t.Errorf("serve --help: %s does not default to %s: %q", flag, want, line)
		}
	}
}

func TestUnknownCommand(t *testing.T) {
	err := run([]string{"launch"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), `unknown command "launch"`) || exitCode(err) != 2 {
		t.Fatalf("err = %v", err)
	}
}

// sparkplug completion SHELL completes every command and every flag of
// each.
func TestCompletionNamesEveryCommandAndFlag(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		var out bytes.Buffer
		if err := run([]string{"completion", shell}, &out, &bytes.Buffer{}); err != nil {
			t.Fatalf("completion %s: %v", shell, err)
		}
		if _, err := exec.LookPath(shell); err == nil {
			file := filepath.Join(t.TempDir(), "completion."+shell)
			if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			if msg, err := exec.Command(shell, "-n", file).CombinedOutput(); err != nil {
				t.Errorf("%s -n: %v\n%s", shell, err, msg)
			}
		}
		for _, c := range commands() {
			if !strings.Contains(out.String(), c.name) {
				t.Errorf("%s completion lacks the command %s", shell, c.name)
			}
			c.flags(&bytes.Buffer{}).VisitAll(func(f *pflag.Flag) {
				if !strings.Contains(out.String(), f.Name) {
					t.Errorf("%s completion lacks %s --%s", shell, c.name, f.Name)
				}
			})
		}
	}
}

// sparkplug version prints the long form, --version the one line; both
// name the version the build set.
func TestVersionCommands(t *testing.T) {
	var long, line bytes.Buffer
	if err := run([]string{"version"}, &long, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"--version"}, &line, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	v := buildVersion()
	for _, want := range []string{"sparkplug " + v.Version + "\n", "  commit: ", "  commit date: ", "  go:          " + v.GoVersion, "  platform:    " + v.Platform} {
		if !strings.Contains(long.String(), want) {
			t.Errorf("sparkplug version lacks %q:\n%s", want, long.String())
		}
	}
	if line.String() != v.Line() || strings.Count(line.String(), "\n") != 1 {
		t.Errorf("sparkplug --version: %q, want %q", line.String(), v.Line())
	}
}
