package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"
)

// connectFor bounds an executor's attempts to reach its driver (whose
// Service may not resolve, or have no endpoint, for a while).
const connectFor = 2 * time.Minute

// dialTimeout bounds one attempt to connect to the driver.
const dialTimeout = 3 * time.Second

// runExecutor runs the executor container and returns its exit code.
func runExecutor(ctx context.Context, getenv func(string) string, log *slog.Logger) int {
	addr, err := driverAddress(getenv("SPARK_DRIVER_URL"))
	if err != nil {
		return fail(log, err)
	}
	reg := registration{execID: getenv("SPARK_EXECUTOR_ID"), appID: getenv("SPARK_APPLICATION_ID"), pod: valueOr(getenv("SPARK_EXECUTOR_POD_NAME"), "-")}
	if reg.execID == "" || reg.appID == "" {
		return fail(log, errors.New("SPARK_EXECUTOR_ID and SPARK_APPLICATION_ID must be set"))
	}
	conn, err := dial(ctx, log, addr)
	if err != nil {
		if ctx.Err() != nil {
			return sigtermExit
		}
		return fail(log, err)
	}
	defer conn.Close()
	go func() {
		<-ctx.Done()
		conn.Close()
	}()
	fmt.Fprintln(conn, reg)
	r := bufio.NewReader(conn)
	for {
		line, err := r.ReadString('\n')
		if ctx.Err() != nil {
			return sigtermExit
		}
		if err != nil {
			return fail(log, fmt.Errorf("driver %s disassociated", addr))
		}
		switch msg := strings.TrimSpace(line); {
		case msg == msgRegistered:
			log.Info("registered with driver", "driver", addr, "id", reg.execID)
		case strings.HasPrefix(msg, msgRejected):
			return fail(log, fmt.Errorf("driver refused registration: %s", strings.TrimSpace(strings.TrimPrefix(msg, msgRejected))))
		case msg == msgOOM:
			log.Info("executor allocating memory until its limit")
			return fail(log, exceedMemoryLimit())
		case msg == msgStop:
			log.Info("driver commanded a shutdown")
			return 0
		}
	}
}

// dial connects to the driver, retrying for connectFor.
func dial(ctx context.Context, log *slog.Logger, addr string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, connectFor)
	defer cancel()
	// Each attempt is bounded on its own: one dial that hangs (an address
	// that answers nothing) must not take the whole connectFor.
	d := net.Dialer{Timeout: dialTimeout}
	for attempt := 1; ; attempt++ {
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			return conn, nil
		}
		if attempt == 1 || attempt%10 == 0 {
			log.Info("driver not reachable yet", "driver", addr, "attempt", attempt, "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("cannot reach driver %s within %s: %w", addr, connectFor, err)
		case <-time.After(time.Second):
		}
	}
}
