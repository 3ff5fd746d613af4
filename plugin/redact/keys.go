package redact

import "strings"

// Omitted stands for a value a log leaves out whatever it is (ArgsKeys).
const Omitted = "<omitted>"

// ArgsKeys returns a command line to show with no value a workflow author
// gave: every --conf (-c, --conf=) as its key and Omitted, and the last
// appArgs arguments (the application's) each as Omitted; every other
// argument (spark-submit's own options, the primary resource) goes
// through Args' rules. It is for a log that holds every tenant's command
// lines (the controller's): a secret the rules cannot tell by its name
// must not reach whoever reads that log, while the keys still say what a
// run was asked. args itself is left as it is.
func ArgsKeys(args []string, appArgs int) []string {
	out := Args(args)
	for i, a := range args {
		prev := ""
		if i > 0 {
			prev = args[i-1]
		}
		switch {
		case prev == "--conf" || prev == "-c":
			k, _, _ := strings.Cut(a, "=")
			out[i] = k + "=" + Omitted
		case strings.HasPrefix(a, "--conf="):
			k, _, _ := strings.Cut(a[len("--conf="):], "=")
			out[i] = "--conf=" + k + "=" + Omitted
		}
	}
	for i := max(len(args)-appArgs, 0); i < len(args); i++ {
		out[i] = Omitted
	}
	return out
}
