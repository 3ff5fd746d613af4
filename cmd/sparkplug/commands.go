package main

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/sparkplug-io/sparkplug/plugin/cli"
)

// version is set at build time with -ldflags "-X main.version=..."; when
// it is not, the version comes from the build information Go records.
var version = cli.DevVersion

// completeCommand is the hidden command the completion scripts ask for
// the candidates of a command's arguments that come from the cluster
// (runComplete); no usage lists it.
const completeCommand = cli.CompleteCommand

// fromCluster are the commands whose arguments complete from the
// cluster (runComplete).
var fromCluster = map[string]bool{"logs": true, "ui": true, "get": true}

// aliases are the other names of commands, as kubectl's: they run the
// command, complete its flags, and are not listed apart.
var aliases = map[string][]string{"get": {"list"}}

// named says whether c is called name, by its name or an alias.
func (c command) named(name string) bool {
	return c.name == name || slices.Contains(aliases[c.name], name)
}

type command struct {
	name, summary string
	// flags are the command's flags, bound to options of their own: what
	// completion and suggestions know of the command.
	flags func(stdout io.Writer) *pflag.FlagSet
	// words are the arguments the command takes when they are a fixed set.
	words []string
	run   func(args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"serve", "answer the Argo agent's template.execute calls (the plugin sidecar)",
			func(w io.Writer) *pflag.FlagSet { return serveFlags(&serveOptions{}, w) }, nil, runServe},
		{"monitor", "watch drivers, executors and workflows: the Spark operator's metrics, and cleanup after ended workflows",
			func(w io.Writer) *pflag.FlagSet { return monitorFlags(&monitorOptions{}, w) }, nil, runMonitor},
		{"controller", "run the Spark steps of every workflow in the namespaces given, as one leader-elected Deployment (controller mode), and monitor them",
			func(w io.Writer) *pflag.FlagSet { return controllerFlags(&controllerOptions{}, w) }, nil, runController},
		{"render", "print the objects the plugin would create for a spark step (and the spark-submit argv of that launcher), without a cluster",
			func(w io.Writer) *pflag.FlagSet { return renderFlags(&renderOptions{}, w) }, nil, runRender},
		{"convert", "turn Spark operator (Scheduled)SparkApplications into (Cron)Workflows with a spark step",
			func(w io.Writer) *pflag.FlagSet { return convertFlags(&convertOptions{}, w) }, nil, runConvert},
		{"schedule", "check a CronWorkflow schedule as Argo does and list its next runs",
			func(w io.Writer) *pflag.FlagSet { return scheduleFlags(&scheduleOptions{}, w) }, nil, runSchedule},
		{"run", "submit a Workflow, wait for its end and print how each Spark node ended (the chart's helm test)",
			func(w io.Writer) *pflag.FlagSet { return runFlags(&runOptions{}, w) }, nil, runRun},
		{"get", "list the Spark steps of a namespace or of all (-A), their phase, message, application id and driver, or watch them",
			func(w io.Writer) *pflag.FlagSet { return getFlags(&getOptions{}, w) }, nil, runGet},
		{"logs", "print or follow the driver (and executor) logs of a workflow's Spark nodes",
			func(w io.Writer) *pflag.FlagSet { return logsFlags(&logsOptions{}, w) }, nil, runLogs},
		{"ui", "forward the Spark UI of a running Spark step's driver to a local port and print its URL",
			func(w io.Writer) *pflag.FlagSet { return uiFlags(&uiOptions{}, w) }, nil, runUI},
		{"completion", "print the shell completion script for bash, zsh or fish",
			func(w io.Writer) *pflag.FlagSet { return newFlagSet("completion bash|zsh|fish", completionSummary, w) }, cli.Shells(), runCompletion},
		{"version", "print the version, commit, commit date, Go version and platform",
			func(w io.Writer) *pflag.FlagSet { return newFlagSet("version", versionSummary, w) }, nil, runVersion},
	}
}

const exitStatus = `Exit status, for every command:
  0  success; also convert when it wrote everything with notes on stderr
     and nothing that will certainly fail (convert --strict exits 1 on any
     note; convert --allow-failing exits 0 on what will fail)
  1  failure: an invalid spark body, a schedule Argo refuses (convert too,
     though it writes the object), an input file that is missing,
     unreadable or not what was expected, a kubeconfig that cannot be read,
     serve stopping on an error, a workflow, node or log that logs or get
     cannot find or read, or a right the API server refused, a step whose
     UI ui cannot forward or whose forward was lost, a Workflow run
     followed that did not succeed or end in time
  2  usage: an unknown command or flag, a bad or missing flag value or argument`

// exitStatusPointer ends a command's help: the statuses are the same for
// every command, so the block is in sparkplug --help alone.
const exitStatusPointer = "Exit status: 0 success, 1 failure, 2 usage error; 'sparkplug --help' says which is which."

func usage() string {
	var b strings.Builder
	b.WriteString("sparkplug runs Apache Spark applications as Argo Workflows steps.\n\nUsage:\n  sparkplug <command> [flags]\n  sparkplug --version\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-10s %s\n", c.name, c.summary)
	}
	b.WriteString("\nRun 'sparkplug <command> --help' (or 'sparkplug help <command>') for a command's flags.\n\n")
	b.WriteString(exitStatus + "\n")
	return b.String()
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 2 && args[0] == "help" && !strings.HasPrefix(args[1], "-") {
		return run([]string{args[1], "--help"}, stdout, stderr)
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		_, err := io.WriteString(stdout, usage())
		return err
	}
	if args[0] == completeCommand {
		return runComplete(args[1:], stdout, stderr)
	}
	if args[0] == "--version" {
		if len(args) > 1 {
			return usageError("", fmt.Errorf("--version takes no arguments, got %q", args[1:]))
		}
		_, err := io.WriteString(stdout, buildVersion().Line())
		return err
	}
	var names []string
	for _, c := range commands() {
		if c.named(args[0]) {
			err := c.run(args[1:], stdout, stderr)
			if errors.Is(err, pflag.ErrHelp) {
				return nil
			}
			return err
		}
		names = append(names, c.name)
		names = append(names, aliases[c.name]...)
	}
	what := "command"
	if strings.HasPrefix(args[0], "-") {
		what = "flag"
	}
	msg := fmt.Sprintf("unknown %s %q", what, args[0])
	if s := cli.Suggest(args[0], append(names, "--help", "--version")); s != "" {
		msg += fmt.Sprintf(": did you mean %q?", s)
	}
	return &exitError{code: 2, err: fmt.Errorf("%s\n\n%s", msg, usage())}
}

// newFlagSet returns a flag set that prints its usage to stdout on --help.
func newFlagSet(name, summary string, stdout io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.Usage = func() {
		fmt.Fprintf(stdout, "Usage: sparkplug %s [flags]\n\n%s\n\n", name, summary)
		if flags := fs.FlagUsages(); flags != "" {
			fmt.Fprintf(stdout, "Flags:\n%s\n", flags)
		}
		fmt.Fprintln(stdout, exitStatusPointer)
	}
	return fs
}

// parseFlags parses args into fs. A flag fs does not know, or a long flag
// given with one dash (-file, which pflag would read as -f ile), is a
// usage error that names it and the flag meant, when one is close.
func parseFlags(fs *pflag.FlagSet, command string, args []string) error {
	if err := singleDashLongFlag(fs, args); err != nil {
		return usageError(command, err)
	}
	err := fs.Parse(args)
	if err == nil || errors.Is(err, pflag.ErrHelp) {
		return err
	}
	var unknown *pflag.NotExistError
	if errors.As(err, &unknown) && unknown.GetSpecifiedShortnames() == "" {
		var long []string
		fs.VisitAll(func(f *pflag.Flag) { long = append(long, f.Name) })
		if s := cli.Suggest(unknown.GetSpecifiedName(), long); s != "" {
			err = fmt.Errorf("%w: did you mean %s?", err, flagNames(fs.Lookup(s)))
		}
	}
	return usageError(command, err)
}

// singleDashLongFlag finds a long flag written with one dash.
func singleDashLongFlag(fs *pflag.FlagSet, args []string) error {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return nil
		}
		if strings.HasPrefix(a, "--") {
			if f := fs.Lookup(strings.TrimPrefix(a, "--")); f != nil && f.NoOptDefVal == "" {
				i++ // its value
			}
			continue
		}
		if !strings.HasPrefix(a, "-") || len(a) < 3 {
			if len(a) == 2 && a[0] == '-' {
				if f := fs.ShorthandLookup(a[1:]); f != nil && f.NoOptDefVal == "" {
					i++
				}
			}
			continue
		}
		name, _, _ := strings.Cut(a[1:], "=")
		if f := fs.Lookup(name); f != nil {
			return fmt.Errorf("unknown flag %s: long flags take two dashes: did you mean %s?", a, flagNames(f))
		}
	}
	return nil
}

// flagNames is how a flag is written: --file (or -f).
func flagNames(f *pflag.Flag) string {
	if f.Shorthand != "" {
		return fmt.Sprintf("--%s (or -%s)", f.Name, f.Shorthand)
	}
	return "--" + f.Name
}

// exitError is an error main exits with a status other than 1 for, or an
// exit status without a message.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// ExitCode is the status main exits with.
func (e *exitError) ExitCode() int { return e.code }

// exitCode is the status main exits with for err: its ExitCode, else 1.
func exitCode(err error) int {
	var e interface{ ExitCode() int }
	if errors.As(err, &e) {
		return e.ExitCode()
	}
	return 1
}

// usageError exits 2 and points to --help.
func usageError(command string, err error) error {
	if command != "" {
		command += " "
	}
	return &exitError{code: 2, err: fmt.Errorf("%w (see sparkplug %s--help)", err, command)}
}

const versionSummary = `Print the version, the commit it was built from (and whether the work tree had
uncommitted changes), that commit's date (Go records no build time), the Go
version and the platform. The version is the one the build set (make build:
-ldflags -X main.version), else the module version Go recorded (go install
...@v1.2.3, or the pseudo-version go build stamps from git), else dev.
sparkplug --version prints the same on one line.`

func runVersion(args []string, stdout, _ io.Writer) error {
	fs := newFlagSet("version", versionSummary, stdout)
	if err := parseFlags(fs, "version", args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("version", fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	_, err := io.WriteString(stdout, buildVersion().String())
	return err
}

// buildVersion is this binary's version.
func buildVersion() cli.Version {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return cli.ReadVersion(version, bi)
}

const completionSummary = `Print the completion script of a shell: commands, their flags, and file names
for flag values.

  bash:  source <(sparkplug completion bash)     (in ~/.bashrc to keep it)
  zsh:   source <(sparkplug completion zsh)      (or save it as _sparkplug in $fpath)
  fish:  sparkplug completion fish | source      (or save it in ~/.config/fish/completions/sparkplug.fish)`

func runCompletion(args []string, stdout, _ io.Writer) error {
	fs := newFlagSet("completion bash|zsh|fish", completionSummary, stdout)
	if err := parseFlags(fs, "completion", args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError("completion", fmt.Errorf("give one shell: %s", strings.Join(cli.Shells(), ", ")))
	}
	var cmds []cli.Command
	for _, c := range commands() {
		cmds = append(cmds, cli.Command{Name: c.name, Aliases: aliases[c.name], Summary: c.summary, Flags: c.flags(io.Discard), Words: c.words, FromProgram: fromCluster[c.name]})
	}
	script, err := cli.Completion(fs.Arg(0), "sparkplug", cmds)
	if err != nil {
		return usageError("completion", err)
	}
	_, err = io.WriteString(stdout, script)
	return err
}
