// Package redact is sparkplug's one set of rules for hiding secret values
// in all text that leaves the process. It is pure; its callers are the
// exits:
//
//   - logs: Handler wraps the process's slog.Handler (cmd/sparkplug's
//     newLogger, for serve and monitor, client-go's lines included), so
//     every message and attribute at every level goes through the rules
//     whatever the call site;
//   - node messages (plugin/execute's result, and the replies Execute
//     makes itself), Events (Core.event, the monitor's cleaner) and the
//     HTTP server's error replies: Value;
//   - `sparkplug render`, both launchers: Object for every object and pod
//     template, Properties for spark.properties, Args and Env for
//     spark-submit's run, Value for its errors and warnings;
//   - the line any failed command ends with (cmd/sparkplug's report):
//     Value.
//
// The objects sparkplug creates, and spark-submit's argv, keep their
// values: only what is shown is redacted.
//
// One log holds more than one tenant's text: the controller's, for every
// namespace it serves. There spark-submit's argv is logged by ArgsKeys,
// its conf keys without their values and the application's arguments
// left out, so that a secret the rules cannot tell by its name never
// crosses from a workflow's namespace into whoever reads that log; the
// values are in the Workflow, and `sparkplug render` shows the argv.
// A sidecar's log stays in its workflow's namespace and shows the values,
// through the rules.
//
// What is caught. Sensitive judges a name (a conf key, a variable, an
// annotation's key, an option, a JSON member, a log attribute's key) by
// its words (split at . _ - and other non-alphanumerics, and at camelCase
// humps): one containing password, passwd, passphrase, secret, token,
// credential or authorization, or one that is or ends in key, pass or
// pwd, or is one of the short words cred, creds, auth, pat, private, sas
// or sig, whole (GITHUB_PAT, not path); a name whose last word is path,
// or file or ends in it (keyfile), names a file and is shown; spark.kubernetes.<role>.secretKeyRef.* is hidden
// whatever else. Value hides, in any text, the value of name=value with a
// sensitive name (also name\=value as spark.properties escapes it,
// quoted values whole), the value after a sensitive option (--password
// x), sensitive JSON members, the password of a URL, a DSN and an Oracle
// thin URL, and bearer and basic tokens. Properties reads its text as
// java.util.Properties.load does, so escaping hides neither a key nor a
// value.
//
// Decisions. A reference to a secret is hidden with it when its name says
// secret (spark.kubernetes.driver.secretKeyRef.X=name:key, the
// driver.secrets mount path): the rules cannot tell a reference from a
// value, and the pod spec shows the reference anyway. A field's own name
// never hides its value in an object (secretName, key and token name
// things), only env names, annotation and label keys do. `name: value`
// in free text is not a shape: an API server's field paths
// (spec.volumes[0].secret.secretName: Required value) would lose their
// words.
//
// What is not caught: a secret with no telling name and no such shape
// (--pw x, -p x, a positional argument, a bare value), text sparkplug
// only passes on (a driver's own log, in `sparkplug logs` and the
// archive), and `sparkplug convert`'s output, a Workflow to apply, which
// must keep its values. Keep secrets in Kubernetes Secrets.
//
// Cost: Value is linear in its text (Go's regexp, a few scans), skips the
// rules whose characters (=, @, ", a dash, "bearer", "basic") a text
// lacks, and Sensitive spares most names the word split
// (BenchmarkValue).
package redact
