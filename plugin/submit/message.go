package submit

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/sparkplug-io/sparkplug/plugin/redact"
)

// Limits of what Message keeps of stderr.
const (
	// messageLines is how many lines of stderr a message quotes at most.
	messageLines = 3
	// lineChars is how much of each quoted line it keeps.
	lineChars = 300
)

// Message says in one line why a spark-submit run failed, for a node's
// message after "SUBMISSION_FAILED: ":
//
//	spark-submit exited 1: Exception in thread "main" ...KubernetesClientException: ... | Caused by: ...
//	spark-submit did not finish within 2m0s: <lines>
//	spark-submit was stopped: signal: killed
//	cannot run spark-submit: fork/exec /opt/spark/bin/spark-submit: no such file or directory
//
// The lines are Lines of stderr. A run that succeeded gives "".
func Message(r Result, timeout time.Duration) string {
	var head string
	switch {
	case r.OK():
		return ""
	case r.TimedOut:
		head = fmt.Sprintf("spark-submit did not finish within %s", timeout)
	case !r.Started && r.Err != nil:
		return "cannot run spark-submit: " + r.Err.Error()
	case !r.Started:
		return "spark-submit did not run"
	case r.Err != nil:
		head = "spark-submit was stopped: " + r.Err.Error()
	default:
		head = fmt.Sprintf("spark-submit exited %d", r.ExitCode)
	}
	if lines := Lines(r.Stderr); len(lines) > 0 {
		// An exception may quote a URL or a token: the message is shown.
		return head + ": " + redact.Value(strings.Join(lines, " | "))
	}
	return head
}

// Lines picks the lines of a JVM's stderr a person needs: the last few
// (messageLines) that name an exception or an error (Exception, Error,
// ERROR), stack frames ("at ...") left out, each trimmed, without a log
// line's date and time, and cut at lineChars. With no such line, it is the
// last line that is not empty.
func Lines(stderr string) []string {
	var picked []string
	last := ""
	for _, line := range strings.Split(stderr, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		last = line
		if strings.HasPrefix(line, "at ") || strings.HasPrefix(line, "... ") {
			continue
		}
		if !strings.Contains(line, "Exception") && !strings.Contains(line, "Error") && !strings.Contains(line, "ERROR") {
			continue
		}
		line = shorten(logTime.ReplaceAllString(line, ""))
		if n := len(picked); n > 0 && picked[n-1] == line {
			continue
		}
		picked = append(picked, line)
	}
	if len(picked) == 0 {
		if last == "" {
			return nil
		}
		return []string{shorten(logTime.ReplaceAllString(last, ""))}
	}
	return picked[max(0, len(picked)-messageLines):]
}

// logTime is the date and time log4j puts first in Spark's log lines
// ("25/01/31 12:00:00 ERROR Client: ...", or ISO 8601).
var logTime = regexp.MustCompile(`^(\d{2}/\d{2}/\d{2}|\d{4}-\d{2}-\d{2})[ T]\d{2}:\d{2}:\d{2}([.,]\d+)?\s+`)

func shorten(s string) string {
	r := []rune(s)
	if len(r) <= lineChars {
		return s
	}
	return string(r[:lineChars-3]) + "..."
}
