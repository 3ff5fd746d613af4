package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func testCommands() []Command {
	render := pflag.NewFlagSet("render", pflag.ContinueOnError)
	render.StringP("file", "f", "", "the file to render; - reads stdin")
	render.StringArrayP("parameter", "p", nil, "NAME=VALUE (repeatable)")
	render.Int("attempt", 1, "the restart-policy attempt")
	convert := pflag.NewFlagSet("convert", pflag.ContinueOnError)
	convert.Bool("keep-names", false, "keep: names [and] 'quotes'")
	// logs has short flags that take no value (-f, -e) next to one that
	// does (-n).
	logs := pflag.NewFlagSet("logs WORKFLOW [NODE]", pflag.ContinueOnError)
	logs.BoolP("follow", "f", false, "stream the logs")
	logs.BoolP("executors", "e", false, "also the executors")
	logs.StringP("namespace", "n", "", "the workflow's namespace")
	get := pflag.NewFlagSet("get", pflag.ContinueOnError)
	get.BoolP("watch", "w", false, "print each step that changes")
	return []Command{
		{Name: "render", Summary: "print the objects", Flags: render},
		{Name: "get", Aliases: []string{"list"}, Summary: "list the Spark steps", Flags: get},
		{Name: "convert", Summary: "turn SparkApplications into Workflows", Flags: convert},
		{Name: "logs", Summary: "print or follow the driver logs of a workflow's Spark nodes", Flags: logs, FromProgram: true},
		{Name: "completion", Summary: "print a completion script", Words: Shells()},
		{Name: "version", Summary: "print the version"},
	}
}

// complete runs the bash script's completion function on a command line
// whose last word is being completed, and returns its candidates.
func complete(t *testing.T, script string, words ...string) []string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "completion.bash")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = "'" + w + "'"
	}
	prog := "source " + file + "\nCOMP_WORDS=(" + strings.Join(quoted, " ") + ")\nCOMP_CWORD=" + string(rune('0'+len(words)-1)) + "\n_sparkplug\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
	out, err := exec.Command("bash", "--norc", "--noprofile", "-c", prog).CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}

// The bash script completes commands, each command's flags, and the
// fixed arguments of a command that has them; a flag's value falls back
// to file names.
func TestBashCompletion(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("bash is not installed")
	}
	script, err := Completion("bash", "sparkplug", testCommands())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		words []string
		want  string
	}{
		{[]string{"sparkplug", "re"}, "render"},
		{[]string{"sparkplug", "--v"}, "--version"},
		{[]string{"sparkplug", "render", "--f"}, "--file"},
		{[]string{"sparkplug", "render", "--"}, "--attempt --file --parameter --help"},
		{[]string{"sparkplug", "render", "-f", ""}, ""},
		{[]string{"sparkplug", "convert", "--k"}, "--keep-names"},
		{[]string{"sparkplug", "lo"}, "logs"},
		{[]string{"sparkplug", "logs", "--f"}, "--follow"},
		// -f takes no value: the word after it is completed again.
		{[]string{"sparkplug", "logs", "-f", "--n"}, "--namespace"},
		{[]string{"sparkplug", "logs", "-n", ""}, ""},
		{[]string{"sparkplug", "completion", "z"}, "zsh"},
		{[]string{"sparkplug", "completion", ""}, "bash zsh fish"},
		// An alias completes its command's flags; the first word, the
		// command's name only.
		{[]string{"sparkplug", "list", "--w"}, "--watch"},
		{[]string{"sparkplug", "get", "--w"}, "--watch"},
		{[]string{"sparkplug", "li"}, ""},
	}
	for _, tt := range tests {
		if got := strings.Join(complete(t, script, tt.words...), " "); got != tt.want {
			t.Errorf("%q: %q, want %q", tt.words, got, tt.want)
		}
	}
}

// Each script names every command and flag, and is valid for its shell
// when that shell is installed.
func TestCompletionScripts(t *testing.T) {
	for _, shell := range Shells() {
		script, err := Completion(shell, "sparkplug", testCommands())
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"render", "convert", "logs", "completion", "version", "file", "parameter", "keep-names", "follow", "executors", "namespace", "zsh"} {
			if !strings.Contains(script, want) {
				t.Errorf("%s script lacks %q", shell, want)
			}
		}
		if strings.Contains(script, "'quotes'") {
			t.Errorf("%s script quotes a usage's quotes:\n%s", shell, script)
		}
		for i, line := range strings.Split(script, "\n") {
			if strings.Count(line, "'")%2 != 0 {
				t.Errorf("%s script line %d opens a quote it does not close: %s", shell, i+1, line)
			}
		}
		if _, err := exec.LookPath(shell); err != nil {
			t.Errorf("%s is not installed to check the script's syntax: bash hack/debs.sh installs it (make test-unit runs it)", shell)
			continue
		}
		file := filepath.Join(t.TempDir(), "completion")
		if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(shell, "-n", file).CombinedOutput(); err != nil {
			t.Errorf("%s -n: %v\n%s\n%s", shell, err, out, script)
		}
	}
	if _, err := Completion("tcsh", "sparkplug", nil); err == nil || !strings.Contains(err.Error(), "bash, zsh, fish") {
		t.Errorf("tcsh: %v", err)
	}
}

// The fish script completes as the bash one does, when fish is installed.
func TestFishCompletion(t *testing.T) {
	if _, err := exec.LookPath("fish"); err != nil {
		t.Fatal("fish is not installed: bash hack/debs.sh installs it (make test-unit runs it)")
	}
	script, err := Completion("fish", "sparkplug", testCommands())
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "sparkplug.fish")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	for line, want := range map[string]string{
		"sparkplug re":            "render",
		"sparkplug render --fi":   "--file",
		"sparkplug completion z":  "zsh",
		"sparkplug convert --kee": "--keep-names",
		"sparkplug logs --fol":    "--follow",
		"sparkplug logs -f --na":  "--namespace",
		"sparkplug list --wa":     "--watch",
	} {
		if got := fishComplete(t, file, line); strings.Join(got, " ") != want {
			t.Errorf("%q: %q, want %q", line, got, want)
		}
	}
}

// stubProgram puts on PATH a sparkplug whose __complete prints how many
// words it was given and the last of them, as candidates.
func stubProgram(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	stub := "#!/bin/sh\n[ \"$1\" = __complete ] || exit 1\n[ \"$2\" = logs ] || exit 1\nshift 2\necho \"words$#\"\nlast=none\nfor a do last=$a; done\necho \"last-$last\"\n"
	if err := os.WriteFile(filepath.Join(dir, "sparkplug"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir + string(os.PathListSeparator) + os.Getenv("PATH")
}

// A command whose arguments come from the program (logs: workflows,
// then nodes) asks it with the words typed after the command, flags and
// their values included, in bash and fish.
func TestCompletionAsksTheProgram(t *testing.T) {
	t.Setenv("PATH", stubProgram(t))
	bashScript, err := Completion("bash", "sparkplug", testCommands())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		words []string
		want  string
	}{
		{[]string{"sparkplug", "logs", ""}, "words0 last-none"},
		{[]string{"sparkplug", "logs", "w"}, "words0"},
		{[]string{"sparkplug", "logs", "-n", "ns", "wf-a", ""}, "words3 last-wf-a"},
		// A flag's value is not asked for.
		{[]string{"sparkplug", "logs", "-n", ""}, ""},
		// Other commands complete files.
		{[]string{"sparkplug", "render", "x"}, ""},
	} {
		if got := strings.Join(complete(t, bashScript, tt.words...), " "); got != tt.want {
			t.Errorf("bash %q: %q, want %q", tt.words, got, tt.want)
		}
	}
	if _, err := exec.LookPath("fish"); err != nil {
		t.Fatal("fish is not installed: bash hack/debs.sh installs it (make test-unit runs it)")
	}
	fishScript, err := Completion("fish", "sparkplug", testCommands())
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "sparkplug.fish")
	if err := os.WriteFile(file, []byte(fishScript), 0o644); err != nil {
		t.Fatal(err)
	}
	for line, want := range map[string]string{
		"sparkplug logs ":          "last-none words0",
		"sparkplug logs -n ns wf ": "last-wf words3",
	} {
		got := fishComplete(t, file, line)
		slices.Sort(got)
		if strings.Join(got, " ") != want {
			t.Errorf("fish %q: %q, want %q", line, got, want)
		}
	}
}

// fishComplete is what fish, with the script in file, completes line
// with: each candidate without its description.
func fishComplete(t *testing.T, file, line string) []string {
	t.Helper()
	out, err := exec.Command("fish", "--no-config", "-c", "source "+file+"; complete -C '"+line+"'").CombinedOutput()
	if err != nil {
		t.Fatalf("fish: %v\n%s", err, out)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		got = append(got, strings.SplitN(l, "\t", 2)[0])
	}
	return got
}
