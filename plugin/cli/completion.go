package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// Shells are the shells Completion writes scripts for.
func Shells() []string { return []string{"bash", "zsh", "fish"} }

// Command is what completion knows of one subcommand.
type Command struct {
	Name, Summary string
	// Aliases are other names of the command: the line after one
	// completes as after Name; the first word completes Name only.
	Aliases []string
	// Flags are its flags; nil when it has none.
	Flags *pflag.FlagSet
	// Words are the arguments it takes, when they are a fixed set (the
	// shells of completion); nil completes file names.
	Words []string
	// FromProgram: its arguments complete from what
	// `PROG __complete NAME WORDS...` prints, one per line, WORDS being
	// the words typed after the command so far (logs: the cluster's
	// workflows, then a workflow's nodes).
	FromProgram bool
}

// CompleteCommand is the hidden command the scripts run for a
// FromProgram command's arguments.
const CompleteCommand = "__complete"

// Completion is the completion script of program prog with commands cmds
// for shell (bash, zsh or fish). Every command also completes --help, and
// the program --help and --version.
func Completion(shell, prog string, cmds []Command) (string, error) {
	switch shell {
	case "bash":
		return bash(prog, cmds), nil
	case "zsh":
		return zsh(prog, cmds), nil
	case "fish":
		return fish(prog, cmds), nil
	}
	return "", fmt.Errorf("no completion for shell %q: want one of %s", shell, strings.Join(Shells(), ", "))
}

// flag is one flag as the scripts need it.
type flag struct {
	long, short, usage string
	value, repeat      bool
}

func flagsOf(c Command) []flag {
	var out []flag
	if c.Flags != nil {
		c.Flags.VisitAll(func(f *pflag.Flag) {
			if f.Hidden {
				return
			}
			t := f.Value.Type()
			out = append(out, flag{
				long: f.Name, short: f.Shorthand, usage: brief(f.Usage),
				value:  f.NoOptDefVal == "",
				repeat: strings.HasSuffix(t, "Array") || strings.HasSuffix(t, "Slice"),
			})
		})
	}
	return append(out, flag{long: "help", short: "h", usage: "show the usage and flags of the command"})
}

// brief is the first clause of a usage line, without the characters the
// scripts' quoting would have to escape.
func brief(usage string) string {
	if i := strings.Index(usage, ";"); i > 0 {
		usage = usage[:i]
	}
	usage = strings.Map(func(r rune) rune {
		switch r {
		case '\'', '"', '`', '\\', '$', '[', ']', ':', '\n':
			return -1
		}
		return r
	}, usage)
	usage = strings.TrimSpace(usage)
	if len(usage) > 70 {
		usage = strings.TrimSpace(usage[:67]) + "..."
	}
	return usage
}

// pattern is the case pattern of a command's names: name|alias.
func pattern(c Command) string {
	return strings.Join(append([]string{c.Name}, c.Aliases...), "|")
}

func names(cmds []Command) []string {
	var out []string
	for _, c := range cmds {
		out = append(out, c.Name)
	}
	return out
}

func bash(prog string, cmds []Command) string {
	fn := "_" + strings.ReplaceAll(prog, "-", "_")
	var b strings.Builder
	fmt.Fprintf(&b, "# bash completion for %[1]s. Load it with: source <(%[1]s completion bash)\n", prog)
	fmt.Fprintf(&b, "%s() {\n", fn)
	b.WriteString("    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n")
	b.WriteString("    COMPREPLY=()\n")
	b.WriteString("    if [[ $COMP_CWORD -eq 1 ]]; then\n")
	fmt.Fprintf(&b, "        COMPREPLY=($(compgen -W %q -- \"$cur\"))\n", strings.Join(names(cmds), " ")+" --help --version")
	b.WriteString("        return\n    fi\n")
	b.WriteString("    case ${COMP_WORDS[1]} in\n")
	for _, c := range cmds {
		var all, valued []string
		for _, f := range flagsOf(c) {
			all = append(all, "--"+f.long)
			if f.short != "" {
				all = append(all, "-"+f.short)
			}
			if f.value {
				valued = append(valued, "--"+f.long)
				if f.short != "" {
					valued = append(valued, "-"+f.short)
				}
			}
		}
		fmt.Fprintf(&b, "    %s)\n", pattern(c))
		if len(valued) > 0 {
			// A flag's value: file names (complete -o default).
			fmt.Fprintf(&b, "        case $prev in %s) return ;; esac\n", strings.Join(valued, "|"))
		}
		b.WriteString("        if [[ $cur == -* ]]; then\n")
		fmt.Fprintf(&b, "            COMPREPLY=($(compgen -W %q -- \"$cur\"))\n", strings.Join(all, " "))
		switch {
		case c.FromProgram:
			b.WriteString("        else\n")
			fmt.Fprintf(&b, "            COMPREPLY=($(compgen -W \"$(%s %s %s \"${COMP_WORDS[@]:2:COMP_CWORD-2}\" 2>/dev/null)\" -- \"$cur\"))\n", prog, CompleteCommand, c.Name)
		case c.Words != nil:
			b.WriteString("        else\n")
			fmt.Fprintf(&b, "            COMPREPLY=($(compgen -W %q -- \"$cur\"))\n", strings.Join(c.Words, " "))
		}
		b.WriteString("        fi\n        ;;\n")
	}
	b.WriteString("    esac\n}\n")
	fmt.Fprintf(&b, "complete -o default -F %s %s\n", fn, prog)
	return b.String()
}

func zsh(prog string, cmds []Command) string {
	fn := "_" + strings.ReplaceAll(prog, "-", "_")
	var b strings.Builder
	fmt.Fprintf(&b, "#compdef %s\n", prog)
	fmt.Fprintf(&b, "# zsh completion for %[1]s. Load it with: source <(%[1]s completion zsh)\n", prog)
	fmt.Fprintf(&b, "# or write it as _%[1]s into a directory of $fpath.\n", prog)
	fmt.Fprintf(&b, "%s() {\n", fn)
	b.WriteString("    local -a commands\n    commands=(\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "        '%s:%s'\n", c.Name, brief(c.Summary))
	}
	b.WriteString("    )\n")
	b.WriteString("    if (( CURRENT == 2 )); then\n")
	b.WriteString("        _describe -t commands 'sparkplug command' commands\n")
	b.WriteString("        compadd -- --help --version\n")
	b.WriteString("        return\n    fi\n")
	b.WriteString("    local cmd=$words[2]\n    shift words\n    (( CURRENT-- ))\n")
	b.WriteString("    case $cmd in\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "    %s)\n        _arguments -s \\\n", pattern(c))
		for _, f := range flagsOf(c) {
			spec := func(name string) string {
				s := name + "[" + f.usage + "]"
				if f.value {
					s += ":" + f.long + ":_files"
				}
				switch {
				case f.repeat:
					return "'*" + s + "'"
				case f.short != "":
					return "'(-" + f.short + " --" + f.long + ")" + s + "'"
				}
				return "'" + s + "'"
			}
			fmt.Fprintf(&b, "            %s \\\n", spec("--"+f.long))
			if f.short != "" {
				fmt.Fprintf(&b, "            %s \\\n", spec("-"+f.short))
			}
		}
		switch {
		case c.FromProgram:
			// words[1] is the command (shifted above): the arguments typed
			// so far are words[2] to the one before the cursor.
			fmt.Fprintf(&b, "            '*:%s:{local -a c; c=(${(f)\"$(%s %s %s ${words[2,CURRENT-1]} 2>/dev/null)\"}); compadd -a c}'\n", c.Name, prog, CompleteCommand, c.Name)
		case c.Words != nil:
			fmt.Fprintf(&b, "            '1:%s:(%s)'\n", c.Name, strings.Join(c.Words, " "))
		default:
			b.WriteString("            '*:file:_files'\n")
		}
		b.WriteString("        ;;\n")
	}
	b.WriteString("    esac\n}\n")
	fmt.Fprintf(&b, "if [[ $funcstack[1] == %[1]s ]]; then %[1]s \"$@\"; else compdef %[1]s %[2]s; fi\n", fn, prog)
	return b.String()
}

func fish(prog string, cmds []Command) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# fish completion for %[1]s. Load it with: %[1]s completion fish | source\n", prog)
	fmt.Fprintf(&b, "# or write it to ~/.config/fish/completions/%s.fish.\n", prog)
	fmt.Fprintf(&b, "complete -c %s -f\n", prog)
	fmt.Fprintf(&b, "complete -c %s -n __fish_use_subcommand -l help -d 'show the commands'\n", prog)
	fmt.Fprintf(&b, "complete -c %s -n __fish_use_subcommand -l version -d 'print the version on one line'\n", prog)
	for _, c := range cmds {
		fmt.Fprintf(&b, "complete -c %s -n __fish_use_subcommand -a %s -d '%s'\n", prog, c.Name, brief(c.Summary))
	}
	for _, c := range cmds {
		cond := fmt.Sprintf("-n '__fish_seen_subcommand_from %s'", strings.Join(append([]string{c.Name}, c.Aliases...), " "))
		for _, f := range flagsOf(c) {
			line := fmt.Sprintf("complete -c %s %s -l %s", prog, cond, f.long)
			if f.short != "" {
				line += " -s " + f.short
			}
			if f.value {
				line += " -r -F"
			}
			fmt.Fprintf(&b, "%s -d '%s'\n", line, f.usage)
		}
		switch {
		case c.FromProgram:
			// Not for a flag being typed; and no error of fish's own when
			// the program is not on PATH.
			fmt.Fprintf(&b, "complete -c %[1]s -n '__fish_seen_subcommand_from %[3]s; and not string match -q -- \"-*\" (commandline -ct)' -a '(command -q %[1]s; and %[1]s %[2]s %[3]s (commandline -opc | tail -n +3) 2>/dev/null)'\n", prog, CompleteCommand, c.Name)
		case c.Words != nil:
			fmt.Fprintf(&b, "complete -c %s %s -a '%s'\n", prog, cond, strings.Join(c.Words, " "))
		default:
			fmt.Fprintf(&b, "complete -c %s %s -F\n", prog, cond)
		}
	}
	return b.String()
}
