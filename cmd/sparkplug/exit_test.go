package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// runIn runs sparkplug as main would, with stdin, and returns the exit
// status main gives.
func runIn(stdin string, args ...string) (status int, stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	in := strings.NewReader(stdin)
	switch {
	case len(args) > 0 && args[0] == "convert":
		err = convertMain(args[1:], in, &out, &errOut)
	case len(args) > 0 && args[0] == "render":
		err = renderMain(args[1:], in, &out, &errOut)
	case len(args) > 0 && args[0] == "run":
		err = runMain(args[1:], in, &out, &errOut)
	case len(args) > 0 && args[0] == "schedule":
		err = scheduleMain(args[1:], time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC), &out, &errOut)
	default:
		err = run(args, &out, &errOut)
	}
	if errors.Is(err, pflag.ErrHelp) {
		err = nil
	}
	if err != nil {
		status = exitCode(err)
	}
	return status, out.String(), errOut.String(), err
}

// Every command exits 0 on success, 1 on failure and 2 on a usage error,
// as sparkplug --help says.
func TestExitStatusOfEveryCommand(t *testing.T) {
	body := filepath.Join("testdata", "render", "body.yaml")
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("t"), 0o600); err != nil {
		t.Fatal(err)
	}
	invalid := "type: Scala\nimage: x:1\nmainClass: A\nmainApplicationFile: local:///a.jar\ndriver: {memroy: 1g}\n"
	tests := []struct {
		name  string
		stdin string
		args  []string
		want  int
	}{
		{"no command", "", nil, 0},
		{"help", "", []string{"--help"}, 0},
		{"help of a command", "", []string{"help", "render"}, 0},
		{"help of an unknown command", "", []string{"help", "rendr"}, 2},
		{"--version", "", []string{"--version"}, 0},
		{"--version with an argument", "", []string{"--version", "x"}, 2},
		{"unknown command", "", []string{"rendr"}, 2},
		{"unknown top-level flag", "", []string{"--verbose"}, 2},

		{"serve --help", "", []string{"serve", "--help"}, 0},
		{"serve without its cluster", "", []string{"serve", "--token-file", token, "--kubeconfig", filepath.Join(t.TempDir(), "missing"), "--addr", "127.0.0.1:0"}, 1},
		{"serve bad flag value", "", []string{"serve", "--requeue-pending", "-1s"}, 2},
		{"serve unknown flag", "", []string{"serve", "--adr", ":1"}, 2},
		{"serve argument", "", []string{"serve", "x"}, 2},

		{"controller --help", "", []string{"controller", "--help"}, 0},
		{"controller without its cluster", "", []string{"controller", "--namespaces", "jobs", "--leader-elect=false", "--kubeconfig", filepath.Join(t.TempDir(), "missing"), "--metrics-addr", "127.0.0.1:0", "--health-addr", "127.0.0.1:0"}, 1},
		{"controller bad flag value", "", []string{"controller", "--namespaces", "jobs", "--workers", "-1"}, 2},
		{"controller serve's flag", "", []string{"controller", "--namespaces", "jobs", "--token-file", "t"}, 2},
		{"controller pprof not loopback", "", []string{"controller", "--namespaces", "jobs", "--leader-elect=false", "--pprof-addr", "0.0.0.0:6060"}, 2},
		{"monitor --help", "", []string{"monitor", "--help"}, 0},
		{"monitor without its cluster", "", []string{"monitor", "--namespaces", "jobs", "--leader-elect=false", "--kubeconfig", filepath.Join(t.TempDir(), "missing"), "--metrics-addr", "127.0.0.1:0", "--health-addr", "127.0.0.1:0"}, 1},
		{"monitor bad flag value", "", []string{"monitor", "--namespaces", "jobs", "--ttl-interval", "-1s"}, 2},
		{"monitor unknown flag", "", []string{"monitor", "--namespace", "jobs"}, 2},

		{"render", "", []string{"render", "-f", body}, 0},
		{"render invalid body", invalid, []string{"render", "-f", "-"}, 1},
		{"render no step", "kind: ConfigMap\n", []string{"render", "-f", "-"}, 1},
		{"render no -f", "", []string{"render"}, 2},
		{"render -file", "", []string{"render", "-file", body}, 2},
		{"render missing file", "", []string{"render", "-f", "missing.yaml"}, 1},
		{"render bad -p", "", []string{"render", "-f", body, "-p", "x"}, 2},

		{"convert", "", []string{"convert", "-f", ksoSparkPi}, 0},
		{"convert with notes", "", []string{"convert", "-f", ksoScheduled}, 0},
		{"convert --strict with notes", "", []string{"convert", "-f", ksoScheduled, "--strict"}, 1},
		{"convert of what will certainly fail", "", []string{"convert", "-f", findingsFile}, 1},
		{"convert --allow-failing", "", []string{"convert", "-f", findingsFile, "--allow-failing"}, 0},
		{"convert nothing convertible", "kind: ConfigMap\napiVersion: v1\n", []string{"convert", "-f", "-"}, 1},
		{"convert no -f", "", []string{"convert"}, 2},
		{"convert missing file", "", []string{"convert", "-f", "missing.yaml"}, 1},
		{"convert -o yaml", "", []string{"convert", "-f", ksoSparkPi, "-o", "yaml"}, 0},
		{"convert -o a directory", "", []string{"convert", "-f", ksoSparkPi, "-o", "out/"}, 2},

		{"schedule", "", []string{"schedule", "30 2 * * *"}, 0},
		{"schedule refused", "", []string{"schedule", "0 25 * * *"}, 1},
		{"schedule none", "", []string{"schedule"}, 2},
		{"schedule bad --from", "", []string{"schedule", "@daily", "--from", "today"}, 2},

		{"logs --help", "", []string{"logs", "--help"}, 0},
		{"logs without its cluster", "", []string{"logs", "wf", "--kubeconfig", filepath.Join(t.TempDir(), "missing")}, 1},
		{"logs no workflow", "", []string{"logs"}, 2},
		{"logs three arguments", "", []string{"logs", "wf", "node", "x"}, 2},
		{"logs bad --attempt", "", []string{"logs", "wf", "--attempt", "0"}, 2},
		{"logs --since and --since-time", "", []string{"logs", "wf", "--since", "1m", "--since-time", "2026-03-01T00:00:00Z"}, 2},
		{"logs bad --since-time", "", []string{"logs", "wf", "--since-time", "yesterday"}, 2},
		{"logs bad --tail", "", []string{"logs", "wf", "--tail", "-2"}, 2},
		{"logs --previous and -f", "", []string{"logs", "wf", "-p", "-f"}, 2},

		{"get --help", "", []string{"get", "--help"}, 0},
		{"list --help", "", []string{"list", "--help"}, 0},
		{"get without its cluster", "", []string{"get", "--kubeconfig", filepath.Join(t.TempDir(), "missing")}, 1},
		{"list without its cluster", "", []string{"list", "-A", "--kubeconfig", filepath.Join(t.TempDir(), "missing")}, 1},
		{"get two workflows", "", []string{"get", "wf", "wf2"}, 2},
		{"get a workflow and -A", "", []string{"get", "wf", "-A"}, 2},
		{"get bad -o", "", []string{"get", "-o", "table"}, 2},

		{"ui --help", "", []string{"ui", "--help"}, 0},
		{"ui without its cluster", "", []string{"ui", "wf", "--kubeconfig", filepath.Join(t.TempDir(), "missing")}, 1},
		{"ui no workflow", "", []string{"ui"}, 2},
		{"ui three arguments", "", []string{"ui", "wf", "node", "x"}, 2},
		{"ui bad --port", "", []string{"ui", "wf", "--port", "70000"}, 2},

		{"run --help", "", []string{"run", "--help"}, 0},
		{"run not a Workflow", "kind: ConfigMap\napiVersion: v1\n", []string{"run", "-f", "-"}, 1},
		{"run without its cluster", "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {generateName: x-}\n", []string{"run", "-f", "-", "--kubeconfig", filepath.Join(t.TempDir(), "missing")}, 1},
		{"run no -f", "", []string{"run"}, 2},
		{"run missing file", "", []string{"run", "-f", "missing.yaml"}, 1},
		{"run argument", "", []string{"run", "-f", "-", "x"}, 2},
		{"run bad --timeout", "", []string{"run", "-f", "-", "--timeout", "-1s"}, 2},

		{"completion", "", []string{"completion", "bash"}, 0},
		{"completion unknown shell", "", []string{"completion", "tcsh"}, 2},
		{"completion no shell", "", []string{"completion"}, 2},

		{"version", "", []string{"version"}, 0},
		{"version argument", "", []string{"version", "x"}, 2},
		{"version unknown flag", "", []string{"version", "--short"}, 2},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, stderr, err := runIn(tt.stdin, tt.args...)
			if got != tt.want {
				t.Errorf("sparkplug %q: exit status %d, want %d (error %v; stderr %s)", tt.args, got, tt.want, err, stderr)
			}
			if got != 0 && (err == nil || err.Error() == "") {
				t.Errorf("sparkplug %q: exit status %d without a message", tt.args, got)
			}
		})
		if len(tt.args) > 0 {
			covered[tt.args[0]+"/"+string(rune('0'+tt.want))] = true
		}
	}
	for _, c := range commands() {
		for _, status := range []string{"0", "1", "2"} {
			// completion and version only write to stdout: nothing fails.
			if status == "1" && (c.name == "completion" || c.name == "version") {
				continue
			}
			if !covered[c.name+"/"+status] {
				t.Errorf("no row of %s exiting %s", c.name, status)
			}
		}
	}
}

// Usage errors name the flag or command meant.
func TestSuggestions(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"rendr"}, `unknown command "rendr": did you mean "render"?`},
		{[]string{"convrt", "-f", "x"}, `did you mean "convert"?`},
		{[]string{"--verison"}, `unknown flag "--verison": did you mean "--version"?`},
		{[]string{"render", "-file", "x.yaml"}, "unknown flag -file: long flags take two dashes: did you mean --filename (or -f)?"},
		{[]string{"render", "--filenam", "x.yaml"}, "unknown flag: --filenam: did you mean --filename (or -f)?"},
		{[]string{"render", "-workflow=x", "-f", "x"}, "unknown flag -workflow=x: long flags take two dashes: did you mean --workflow?"},
		{[]string{"convert", "--keepnames"}, "did you mean --keep-names?"},
		{[]string{"convert", "--filenme", "x"}, "unknown flag: --filenme: did you mean --filename (or -f)?"},
		{[]string{"render", "--namespce", "x"}, "unknown flag: --namespce: did you mean --namespace (or -n)?"},
		{[]string{"schedule", "--timezon", "UTC"}, "did you mean --timezone?"},
		{[]string{"serve", "--tokenfile", "x"}, "did you mean --token-file?"},
		{[]string{"help", "rendr"}, `unknown command "rendr": did you mean "render"?`},
		{[]string{"help", "versoin"}, `did you mean "version"?`},
	}
	for _, tt := range tests {
		status, _, _, err := runIn("", tt.args...)
		if status != 2 || err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("sparkplug %q: status %d, error %v; want 2 and %q", tt.args, status, err, tt.want)
		}
	}
	// A value that happens to look like a long flag is a value.
	if status, _, _, err := runIn("", "render", "-f", filepath.Join("testdata", "render", "body.yaml"), "--workflow", "-file"); status != 0 {
		t.Errorf("--workflow -file: status %d, %v", status, err)
	}
}

// sparkplug --help says what the exit statuses mean; every command's
// --help points there in one line instead of repeating the block.
func TestHelpDocumentsExitStatus(t *testing.T) {
	_, out, _, err := runIn("", "--help")
	if err != nil || !strings.Contains(out, "Exit status, for every command:\n  0  success") || !strings.Contains(out, "2  usage") {
		t.Errorf("sparkplug --help: %v\n%s", err, out)
	}
	for _, c := range commands() {
		_, out, _, err := runIn("", c.name, "--help")
		if err != nil || strings.Contains(out, "Exit status, for every command") || !strings.Contains(out, exitStatusPointer) {
			t.Errorf("sparkplug %s --help: %v; want the one-line pointer, not the block\n%s", c.name, err, out)
		}
	}
}

// A command's help has no empty Flags section, and no flag's usage holds
// a backquoted word, which pflag would print as the flag's placeholder.
func TestHelpFlagsSection(t *testing.T) {
	for _, c := range commands() {
		_, out, _, err := runIn("", c.name, "--help")
		if err != nil {
			t.Fatalf("sparkplug %s --help: %v", c.name, err)
		}
		if strings.Contains(out, "Flags:\n\n") || strings.HasSuffix(strings.TrimSpace(out), "Flags:") {
			t.Errorf("sparkplug %s --help: an empty Flags section\n%s", c.name, out)
		}
		c.flags(io.Discard).VisitAll(func(f *pflag.Flag) {
			if strings.Contains(f.Usage, "`") {
				t.Errorf("sparkplug %s --%s: a backquote in the usage names the placeholder: %q", c.name, f.Name, f.Usage)
			}
		})
	}
	if _, out, _, _ := runIn("", "completion", "--help"); strings.Contains(out, "Flags:") {
		t.Errorf("completion --help has a Flags section, without flags:\n%s", out)
	}
	if _, out, _, _ := runIn("", "render", "--help"); !strings.Contains(out, "--started-at string") {
		t.Errorf("render --help: --started-at's placeholder is not string:\n%s", out)
	}
}

// A KUBECONFIG naming only files that do not exist fails naming them, not
// with client-go's "no configuration has been provided"; one file that
// exists among them is enough.
func TestKubeconfigMissingFile(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing-kubeconfig")
	t.Setenv("KUBECONFIG", missing)
	_, _, _, err := clusterClients("", "", "")
	if err == nil || !strings.Contains(err.Error(), missing) || strings.Contains(err.Error(), "no configuration has been provided") {
		t.Errorf("KUBECONFIG=%s: %v; want an error naming the file", missing, err)
	}
	if status, _, _, err := runIn("", "logs", "wf"); status != 1 || err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("logs with KUBECONFIG=%s: status %d, %v; want 1 and the file named", missing, status, err)
	}
	if _, _, _, err := clusterClients(missing, "", ""); err == nil || !strings.Contains(err.Error(), "--kubeconfig "+missing) {
		t.Errorf("--kubeconfig %s: %v; want an error naming the flag and file", missing, err)
	}

	present := filepath.Join(dir, "kubeconfig")
	kc := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: https://127.0.0.1:1}}]\nusers: [{name: u, user: {}}]\ncontexts: [{name: x, context: {cluster: c, user: u, namespace: jobs}}]\ncurrent-context: x\n"
	if err := os.WriteFile(present, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", missing+string(filepath.ListSeparator)+present)
	if _, _, ns, err := clusterClients("", "", ""); err != nil || ns != "jobs" {
		t.Errorf("KUBECONFIG with one file present: namespace %q, %v", ns, err)
	}
}
