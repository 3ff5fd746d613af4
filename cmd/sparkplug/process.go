package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"

	"github.com/sparkplug-io/sparkplug/plugin/cli"
	"github.com/sparkplug-io/sparkplug/plugin/daemon"
)

// runProcess runs a command that runs until it is stopped (serve,
// controller, monitor): with its logger on stderr, client-go's log routed
// into it, the Go collector's memory limit set from its container's
// (unless GOMEMLIMIT is set), until SIGTERM or SIGINT.
func runProcess(command string, stderr io.Writer, logLevel, logFormat string, run func(context.Context, *slog.Logger) error) error {
	log, err := cli.NewLogger(stderr, logLevel, logFormat)
	if err != nil {
		return usageError(command, err)
	}
	klog.SetSlogLogger(log.With("component", "client-go"))
	daemon.LimitMemory(os.DirFS("/"), log)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return run(ctx, log)
}
