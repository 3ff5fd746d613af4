package framework

import (
	"testing"
	"time"
)

// timeoutOr is a wait's timeout: the first of timeout, else DefaultTimeout.
func timeoutOr(timeout []time.Duration) time.Duration {
	if len(timeout) > 0 {
		return timeout[0]
	}
	return DefaultTimeout
}

// pollUntil is the one poll loop of the fixtures: it calls done every
// interval until it holds, and fails t when done fails ("waiting for
// what: err"), when limit has passed ("timed out after limit waiting for
// what", then "; " and what state says was seen last, if state is not
// nil), or when a process of env died. It returns how long it waited.
func pollUntil(t *testing.T, env *Env, what string, limit, interval time.Duration, done func() (bool, error), state func() string) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		ok, err := done()
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if ok {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			if state != nil {
				t.Fatalf("timed out after %v waiting for %s; %s", limit, what, state())
			}
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		if err := env.CheckAlive(); err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		time.Sleep(interval)
	}
}
