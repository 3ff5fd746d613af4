package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/golden"
	"github.com/sparkplug-io/sparkplug/plugin/schedule"
)

// runScheduleAt runs sparkplug schedule at a fixed now.
func runScheduleAt(t *testing.T, now string, args ...string) cmdResult {
	t.Helper()
	at, err := time.Parse(time.RFC3339, now)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err = scheduleMain(args, at, &stdout, &stderr)
	if errors.Is(err, pflag.ErrHelp) {
		err = nil
	}
	return cmdResult{stdout.String(), stderr.String(), err}
}

func TestScheduleHelp(t *testing.T) {
	r := runScheduleAt(t, "2026-01-01T00:00:00Z", "--help")
	if r.err != nil {
		t.Fatal(r.err)
	}
	for _, want := range []string{"Usage: sparkplug schedule EXPR... [flags]", "--timezone", "--next", "--from", "quote it", "Exit status: 0"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("schedule --help does not say %q:\n%s", want, r.stdout)
		}
	}
}

func TestScheduleLists(t *testing.T) {
	tests := []struct {
		name       string
		now        string
		args       []string
		wantStdout string
		wantStderr []string
	}{
		{"Berlin across the spring change", "2026-03-01T00:00:00Z", []string{"30 2 * * *", "--timezone", "Europe/Berlin", "--from", "2026-03-27T00:00:00Z", "--next", "3"},
			`In Europe/Berlin, after 2026-03-27 01:00 CET:
  2026-03-27 Fri 02:30 CET  2026-03-27T01:30:00Z
  2026-03-28 Sat 02:30 CET  2026-03-28T01:30:00Z
  2026-03-30 Mon 02:30 CEST  2026-03-30T00:30:00Z
`, []string{
				"warning: 2026-03-29: clocks go forward from 02:00 CET to 03:00 CEST, so 02:30 does not exist that day; robfig/cron, and so Argo, skips it",
				"warning: 2026-10-25: clocks go back from 03:00 CEST to 02:00 CET, so 02:00-02:59 happens twice; robfig/cron, and so Argo, starts the run at 02:30 twice",
			}},
		{"from defaults to now; UTC without a timezone", "2026-06-01T10:15:00Z", []string{"0 * * * *", "--next", "2"},
			`In UTC (no timezone: the workflow-controller's zone), after 2026-06-01 10:15 UTC:
  2026-06-01 Mon 11:00 UTC  2026-06-01T11:00:00Z
  2026-06-01 Mon 12:00 UTC  2026-06-01T12:00:00Z
`, nil},
		{"a zone in the expression", "2026-06-01T00:00:00Z", []string{"CRON_TZ=Asia/Tokyo 0 9 * * *", "--next", "1"},
			`In Asia/Tokyo, after 2026-06-01 09:00 JST:
  2026-06-02 Tue 09:00 JST  2026-06-02T00:00:00Z
`, nil},
		{"two schedules that meet start one Workflow", "2026-06-01T00:00:00Z", []string{"0 */12 * * *", "0 12 * * 1", "--next", "2"},
			`In UTC (no timezone: the workflow-controller's zone), after 2026-06-01 00:00 UTC:
  [1] 0 */12 * * *
  [2] 0 12 * * 1
  2026-06-01 Mon 12:00 UTC  2026-06-01T12:00:00Z  [1,2] one Workflow: Argo names it after the time
  2026-06-02 Tue 00:00 UTC  2026-06-02T00:00:00Z  [1]
`, nil},
		{"@every 90m", "2026-06-01T00:00:00Z", []string{"@every 90m", "--next", "2"},
			`In UTC (no timezone: the workflow-controller's zone), after 2026-06-01 00:00 UTC:
  2026-06-01 Mon 01:30 UTC  2026-06-01T01:30:00Z
  2026-06-01 Mon 03:00 UTC  2026-06-01T03:00:00Z
`, []string{`warning: @every 90m: Argo's controller adds a CronWorkflow's schedules anew each time it handles it`, `the same rate on the clock: schedules "0 */3 * * *" and "30 1-23/3 * * *"`}},
		{"Sao Paulo, no daylight saving since 2019", "2026-06-01T00:00:00Z", []string{"0 0 * * *", "--timezone", "America/Sao_Paulo", "--next", "1"},
			`In America/Sao_Paulo, after 2026-05-31 21:00 -03:
  2026-06-01 Mon 00:00 -03  2026-06-01T03:00:00Z
`, nil},
		{"never", "2026-06-01T00:00:00Z", []string{"0 0 30 2 *"},
			`In UTC (no timezone: the workflow-controller's zone), after 2026-06-01 00:00 UTC:
  (no more runs within five years)
`, []string{"warning: robfig/cron finds no run within five years"}},
		{"--next 0 only checks", "2026-06-01T00:00:00Z", []string{"@daily", "--next", "0"},
			"In UTC (no timezone: the workflow-controller's zone), after 2026-06-01 00:00 UTC:\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runScheduleAt(t, tt.now, tt.args...)
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.stdout != tt.wantStdout {
				t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, tt.wantStdout)
			}
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if r.stderr == "" {
				lines = nil
			}
			if len(tt.wantStderr) == 0 && len(lines) > 0 {
				t.Errorf("stderr:\n%s\nwant nothing", r.stderr)
			}
			for _, want := range tt.wantStderr {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr:\n%s\nwant %q", r.stderr, want)
				}
			}
		})
	}
}

func TestScheduleExitStatus(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want int
		msg  string
	}{
		{"valid", []string{"30 2 * * *"}, 0, ""},
		{"malformed", []string{"61 * * * *"}, 1, `cron schedule "61 * * * *" is malformed: end of range (61) above maximum (59)`},
		{"unknown zone", []string{"30 2 * * *", "--timezone", "Europe/Berln"}, 1, `invalid timezone "Europe/Berln": unknown time zone Europe/Berln`},
		{"a zone twice", []string{"CRON_TZ=Asia/Tokyo 0 9 * * *", "--timezone", "UTC"}, 1, "so it never runs; keep only one of the two"},
		{"unquoted", []string{"30", "2", "*", "*", "*"}, 1, "each argument is one schedule: quote it"},
		{"no schedule", nil, 2, "give at least one schedule"},
		{"bad --from", []string{"@daily", "--from", "tomorrow"}, 2, `--from "tomorrow": want RFC 3339`},
		{"negative --next", []string{"@daily", "--next", "-1"}, 2, "--next -1"},
		{"unknown flag", []string{"@daily", "--tz", "UTC"}, 2, "unknown flag: --tz (see sparkplug schedule --help)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runScheduleAt(t, "2026-06-01T00:00:00Z", tt.args...)
			if got := r.status(); got != tt.want {
				t.Errorf("exit status %d, want %d (%v)", got, tt.want, r.err)
			}
			if tt.msg != "" && (r.err == nil || !strings.Contains(r.err.Error(), tt.msg)) {
				t.Errorf("error %v, want %q", r.err, tt.msg)
			}
		})
	}
}

// The sparkplug schedule example of docs/migration.md is what the command
// prints.
func TestReadmeScheduleExample(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "docs", "migration.md"))
	if err != nil {
		t.Fatal(err)
	}
	const prompt = "$ sparkplug schedule "
	text := string(readme)
	start := strings.Index(text, prompt)
	if start < 0 {
		t.Fatal("docs/migration.md has no sparkplug schedule example")
	}
	block := text[start:]
	block = block[:strings.Index(block, "```")]
	command, want, _ := strings.Cut(block, "\n")
	args, err := splitShell(strings.TrimPrefix(command, prompt))
	if err != nil {
		t.Fatal(err)
	}
	r := runScheduleAt(t, "2026-01-01T00:00:00Z", args...)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := r.stdout + r.stderr; got != want {
		t.Errorf("docs/migration.md shows\n%s\nsparkplug %s prints\n%s", want, strings.Join(args, " "), got)
	}
}

// splitShell splits a command line with single-quoted words.
func splitShell(s string) ([]string, error) {
	var args []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if rest, ok := strings.CutPrefix(s, "'"); ok {
			word, after, found := strings.Cut(rest, "'")
			if !found {
				return nil, errors.New("unterminated quote in " + s)
			}
			args, s = append(args, word), after
			continue
		}
		word, after, _ := strings.Cut(s, " ")
		args, s = append(args, word), after
	}
	return args, nil
}

// -o json and -o yaml print the runs and the warnings as one object (a
// golden file), the warnings still on stderr; the text is unchanged.
func TestScheduleGoldenStructuredOutput(t *testing.T) {
	args := []string{"30 2 * * *", "0 3 * * 1", "--timezone", "Europe/Berlin", "--from", "2026-03-27T00:00:00Z", "--next", "4"}
	text := runScheduleAt(t, "2026-03-01T00:00:00Z", args...)
	j := runScheduleAt(t, "2026-03-01T00:00:00Z", append(args, "-o", "json")...)
	y := runScheduleAt(t, "2026-03-01T00:00:00Z", append(args, "--output", "yaml")...)
	if text.err != nil || j.err != nil || y.err != nil {
		t.Fatal(text.err, j.err, y.err)
	}
	golden.Compare(t, filepath.Join("testdata", "schedule", "berlin.golden.json"), j.stdout)
	if j.stderr != text.stderr || !strings.Contains(j.stderr, "warning: [1] 2026-03-29") {
		t.Errorf("-o json changes the warnings on stderr:\n%s\n%s", j.stderr, text.stderr)
	}
	var fromJSON, fromYAML schedule.Report
	if err := json.Unmarshal([]byte(j.stdout), &fromJSON); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(y.stdout), &fromYAML); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromJSON, fromYAML) {
		t.Errorf("-o yaml differs from -o json:\n%s\n%s", y.stdout, j.stdout)
	}
	if len(fromJSON.Runs) != 4 || fromJSON.Runs[3].UTC != "2026-03-30T01:00:00Z" || !slices.Equal(fromJSON.Runs[3].Schedules, []int{2}) || len(fromJSON.Warnings) != 2 || !fromJSON.More {
		t.Errorf("runs and warnings: %+v", fromJSON)
	}
	if r := runScheduleAt(t, "2026-03-01T00:00:00Z", "@daily", "-o", "wide"); exitCode(r.err) != 2 {
		t.Errorf("-o wide: %v, want a usage error", r.err)
	}
}
