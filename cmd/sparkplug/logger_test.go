package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// The line a failed command ends with shows no secret it quotes.
func TestReportRedacts(t *testing.T) {
	var out bytes.Buffer
	report(&out, errors.New(`--history-server-url "https://u:leak01@h": not a URL`))
	if strings.Contains(out.String(), "leak01") || !strings.HasPrefix(out.String(), "sparkplug: --history-server-url") {
		t.Errorf("report wrote %q", out.String())
	}
	out.Reset()
	report(&out, errors.New(""))
	if out.Len() != 0 {
		t.Errorf("report of an empty error wrote %q", out.String())
	}
}
