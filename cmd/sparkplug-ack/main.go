// Command sparkplug-ack is the acknowledger: in controller mode, where a
// cluster-wide `sparkplug controller` does the work, the agent pod runs it
// instead of the sidecar. It checks the agent's bearer token and answers
// spark templates with the sidecar's acknowledgement and every other
// template with {} (package acksrv). It has no Kubernetes client.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/sparkplug-io/sparkplug/plugin/acksrv"
	"github.com/sparkplug-io/sparkplug/plugin/cli"
)

// version is set at build time (-ldflags "-X main.version=v1.2.3").
var version = cli.DevVersion

const summary = `Acknowledge the Argo agent's template.execute calls for the agent pod in
controller mode: spark templates get {"node":{},"requeue":"0s"} (the
controller reports their nodes), every other template gets {}. The bearer
token is always checked.`

func main() {
	smallRuntime()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// smallRuntime keeps the process small (issues #22 and #33: at most
// 8 MiB resident), unless GOGC or GOMAXPROCS say otherwise: one P, since a
// reply takes microseconds (one P answers over 15,000 a second), which
// saves the per-P caches; and a collection at 25% heap growth instead
// of 100%: the live heap is tens of KiB, so the heap's floor, not its
// growth, decides, and it falls from 4 MiB to 1 MiB. `make bench-ack`
// measures the effect.
func smallRuntime() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(25)
		go returnFreedMemory(freeEvery)
	}
}

// freeEvery is how often the acknowledger looks at what it allocated,
// and freeAfter how much allocation since it last returned memory makes
// it collect and return what is free.
const (
	freeEvery = time.Second
	freeAfter = 1 << 20
)

// returnFreedMemory collects and returns freed heap to the system once
// calls allocated freeAfter since the last time. Go's background
// scavenger returns memory slowly, and keeps some: after the agent's 16
// workers sent a burst, the process stayed at 9.3 MiB, with a live heap
// of tens of KiB; it returns to about 8.4 MiB (docs/operations.md, How
// fast, says what holds the rest). Reading the figure costs
// nothing; the collection takes microseconds, and an idle acknowledger
// makes none.
func returnFreedMemory(interval time.Duration) {
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	var last uint64
	for range time.Tick(interval) {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return
		}
		if now := sample[0].Value.Uint64(); now-last > freeAfter {
			debug.FreeOSMemory()
			last = now
		}
	}
}

// run is main with its streams: exit status 0 on a clean stop or --help,
// 2 for a usage error, 1 when serving fails.
func run(args []string, stdout, stderr io.Writer) int {
	c := acksrv.DefaultConfig()
	var logLevel, logFormat string
	var showVersion bool
	fs := pflag.NewFlagSet("sparkplug-ack", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stdout, "Usage: sparkplug-ack [flags]\n\n%s\n\nFlags:\n%s", summary, fs.FlagUsages())
	}
	fs.StringVar(&c.Addr, "addr", c.Addr, "address to listen on (the agent calls localhost at the port in plugin.yaml)")
	fs.StringVar(&c.TokenFile, "token-file", c.TokenFile, "file holding the bearer token the agent sends")
	fs.DurationVar(&c.ShutdownGrace, "shutdown-grace", c.ShutdownGrace, "how long in-flight requests may finish after SIGTERM")
	fs.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&logFormat, "log-format", "json", "json or text")
	fs.BoolVar(&showVersion, "version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "sparkplug-ack: %s (see --help)\n", err)
		return 2
	}
	if showVersion {
		bi, _ := debug.ReadBuildInfo()
		fmt.Fprint(stdout, cli.ReadVersion(version, bi).String())
		return 0
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "sparkplug-ack: unexpected arguments %q (see --help)\n", fs.Args())
		return 2
	}
	log, err := cli.NewLogger(stderr, logLevel, logFormat)
	if err == nil {
		err = c.Validate()
	}
	if err != nil {
		fmt.Fprintf(stderr, "sparkplug-ack: %s (see --help)\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := acksrv.Run(ctx, c, log.With("version", version)); err != nil {
		log.Error("sparkplug-ack stopped", "error", err.Error())
		return 1
	}
	return 0
}
