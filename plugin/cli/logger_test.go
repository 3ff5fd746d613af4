package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// The logger serve, monitor and sparkplug-ack build hides secrets in every line, at
// every level: spark-submit's output at debug (issue #20, finding 6),
// messages, string attributes, errors, with-attributes, command lines.
func TestLoggerRedacts(t *testing.T) {
	for _, format := range []string{"json", "text"} {
		var out bytes.Buffer
		log, err := NewLogger(&out, "debug", format)
		if err != nil {
			t.Fatal(err)
		}
		log.Debug("spark-submit output",
			"stdout", "Exception: bad --conf spark.hadoop.fs.s3a.secret.key=leak01",
			"stderr", "Caused by: jdbc:mysql://u:leak02@h/db refused")
		log.With("dsn", "postgres://u:leak03@db/x").Info("a message with password=leak04",
			"error", errors.New("Unauthorized: Bearer leak05"),
			"argv", []string{"--password", "leak06"},
			"token", "leak07")
		for _, secret := range []string{"leak01", "leak02", "leak03", "leak04", "leak05", "leak06", "leak07"} {
			if strings.Contains(out.String(), secret) {
				t.Errorf("%s log shows %s:\n%s", format, secret, out.String())
			}
		}
		if !strings.Contains(out.String(), "spark-submit output") || !strings.Contains(out.String(), "jdbc:mysql://u:") {
			t.Errorf("%s log lost what is no secret:\n%s", format, out.String())
		}
	}
}

// A log format other than json or text is refused, naming the flag.
func TestLoggerRefusesAnUnknownFormat(t *testing.T) {
	if _, err := NewLogger(&bytes.Buffer{}, "info", "xml"); err == nil || !strings.Contains(err.Error(), "--log-format") {
		t.Fatalf("format xml: %v, want an error naming --log-format", err)
	}
	if _, err := NewLogger(&bytes.Buffer{}, "loud", "json"); err == nil || !strings.Contains(err.Error(), "--log-level") {
		t.Fatalf("level loud: %v, want an error naming --log-level", err)
	}
}
