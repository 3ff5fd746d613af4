package step

import (
	"testing"
	"time"
)

func TestParseTimeout(t *testing.T) {
	for in, want := range map[string]time.Duration{"": 0, "90s": 90 * time.Second, "1h30m": 90 * time.Minute, "300": 300 * time.Second, " 10m ": 10 * time.Minute} {
		got, err := ParseTimeout(in)
		if err != nil || got != want {
			t.Errorf("ParseTimeout(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	if _, err := ParseTimeout("soon"); err == nil {
		t.Error(`ParseTimeout("soon") returned no error`)
	}
}
