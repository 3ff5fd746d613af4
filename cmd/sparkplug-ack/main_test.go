package main

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// --help prints the usage and every flag and exits 0; a mistyped flag or
// a stray argument is a usage error, 2; so is a config Validate refuses.
func TestCommandLine(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run([]string{"--help"}, &out, &errs); code != 0 {
		t.Fatalf("--help: exit %d, stderr %s", code, errs.String())
	}
	for _, flag := range []string{"--addr", "--token-file", "--shutdown-grace", "--log-level", "--log-format", "--version"} {
		if !strings.Contains(out.String(), flag) {
			t.Errorf("--help does not list %s:\n%s", flag, out.String())
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--adr", "x"}, "unknown flag: --adr"},
		{[]string{"serve"}, "unexpected arguments"},
		{[]string{"--token-file", ""}, "--token-file is required"},
		{[]string{"--log-format", "xml"}, "--log-format must be json or text"},
	} {
		errs.Reset()
		if code := run(tc.args, &out, &errs); code != 2 || !strings.Contains(errs.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, errs.String(), tc.want)
		}
	}
}

// Without GOMAXPROCS and GOGC in its environment the process runs on
// one P and collects at 25% growth; either variable set wins.
func TestSmallRuntime(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	gc := debug.SetGCPercent(100)
	t.Cleanup(func() { runtime.GOMAXPROCS(procs); debug.SetGCPercent(gc) })

	t.Setenv("GOMAXPROCS", "")
	t.Setenv("GOGC", "")
	runtime.GOMAXPROCS(4)
	debug.SetGCPercent(100)
	smallRuntime()
	if p, g := runtime.GOMAXPROCS(0), debug.SetGCPercent(100); p != 1 || g != 25 {
		t.Fatalf("unset: GOMAXPROCS %d, GOGC %d; want 1 and 25", p, g)
	}
	t.Setenv("GOMAXPROCS", "4")
	t.Setenv("GOGC", "100")
	runtime.GOMAXPROCS(4)
	smallRuntime()
	if p, g := runtime.GOMAXPROCS(0), debug.SetGCPercent(100); p != 4 || g != 100 {
		t.Fatalf("set: GOMAXPROCS %d, GOGC %d; want 4 and 100 kept", p, g)
	}
}
