package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/redact"
	"github.com/sparkplug-io/sparkplug/plugin/render"
	"github.com/sparkplug-io/sparkplug/plugin/setting"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/submit"
	"github.com/sparkplug-io/sparkplug/templates"
)

const renderSummary = `Print the objects the plugin would create for each spark step of a file (driver pod,
ConfigMap with spark.properties and the executor pod template, driver Service, the UI
Service of sparkUIOptions, Ingresses), and the spark-submit run of a step launched by
spark-submit, as YAML (-o json: one List), without a cluster.

The file (-f, or - for stdin) holds a bare spark body, a plugin: {spark: ...} snippet,
an Argo template, or Workflows, WorkflowTemplates, ClusterWorkflowTemplates and
CronWorkflows: every template with a spark body is rendered, after a "# template: <name>"
comment. A Spark operator SparkApplication or ScheduledSparkApplication is rendered as
the Workflow or CronWorkflow sparkplug convert makes of it (after a "# from:" comment).
Parameters are substituted as Argo would from their value or default and
spec.arguments (override with -p); stderr warns about a parameter left unresolved
(shown as written) and a -p that no step declares or uses. What only the cluster knows takes placeholders:
workflow uid 00000000-0000-0000-0000-000000000000, node <workflow>-<number>, the
driver's uid in the owner references; the workflow's name is --workflow, else the
document's name, else its generateName + xxxxx.

A step whose launcher is spark-submit (sparkplug.launcher in the body, else --launcher,
as for serve) opens with a document sparkSubmit instead of the driver pod, which
spark-submit creates: the argv the plugin execs (its program first), its whole
environment and the files it writes first (the driver and executor pod templates),
built by the plugin's own code, secret values <redacted> as the plugin logs them; then
the objects the plugin still creates itself. --spark-home and
--kubernetes-request-timeout are serve's; what only the plugin's pod knows takes
placeholders: the API server ` + render.PlaceholderAPIServer + `, a pod's service
account token and CA, /tmp/sparkplug-*-xxxxx directories, and <the plugin's $NAME>
for the variables of its own environment.

An invalid body prints the message the plugin would put on the node, after the file's
name and the line and column of its first problem's field (FILE:LINE:COLUMN:, as
convert reports), and exits 1.`

type renderOptions struct {
	file         string
	output       outputFormat
	templatesDir string
	params       []string
	run          render.Options
}

func (o *renderOptions) validate() error {
	if o.file == "" {
		return errors.New("-f is required: the file to render, or - for stdin")
	}
	if o.run.StartedAt != "" {
		if _, err := time.Parse(time.RFC3339, o.run.StartedAt); err != nil {
			return fmt.Errorf("--started-at %q: want an RFC 3339 time such as 2026-11-26T05:00:00Z", o.run.StartedAt)
		}
	}
	if o.run.Attempt < 1 {
		return fmt.Errorf("--attempt %d: attempts count from 1", o.run.Attempt)
	}
	if l := o.run.Defaults.Launcher; l != spec.LauncherNative && l != spec.LauncherSparkSubmit {
		return fmt.Errorf("--launcher must be %s or %s, got %q", spec.LauncherNative, spec.LauncherSparkSubmit, l)
	}
	if o.run.Submit.SparkHome == "" {
		return errors.New("--spark-home must not be empty")
	}
	if o.run.Submit.RequestTimeout < 0 {
		return fmt.Errorf("--kubernetes-request-timeout must not be negative, got %s", o.run.Submit.RequestTimeout)
	}
	if err := errors.Join(o.run.Defaults.Validate(), o.run.Policy.Validate()); err != nil {
		return setting.Flags(err)
	}
	o.run.Parameters = map[string]string{}
	for _, p := range o.params {
		name, value, ok := strings.Cut(p, "=")
		if !ok || name == "" {
			return fmt.Errorf("-p %q: want NAME=VALUE", p)
		}
		o.run.Parameters[name] = value
	}
	return nil
}

func runRender(args []string, stdout, stderr io.Writer) error {
	return renderMain(args, os.Stdin, stdout, stderr)
}

// renderFlags binds render's flags to o.
func renderFlags(o *renderOptions, stdout io.Writer) *pflag.FlagSet {
	flags := newFlagSet("render", renderSummary, stdout)
	flags.StringVarP(&o.file, "filename", "f", "", "the file to render; - reads stdin")
	flags.SetNormalizeFunc(fileIsFilename)
	bindOutput(flags, &o.output)
	flags.StringVar(&o.run.Workflow, "workflow", "", "the workflow's name (default: the document's name, else its generateName + xxxxx)")
	flags.StringVarP(&o.run.Namespace, "namespace", "n", "", "the namespace (default: the document's, else default)")
	flags.StringVar(&o.run.UID, "uid", "", "the workflow's uid (default: "+render.PlaceholderUID+")")
	flags.StringVar(&o.run.NodeID, "node", "", "the Argo node id, for every step (default: <workflow>-<fnv32a of the template name>)")
	flags.IntVar(&o.run.Attempt, "attempt", 1, "the restart-policy attempt")
	flags.StringVar(&o.run.StartedAt, "started-at", "", "the workflow's status.startedAt (RFC 3339, e.g. 2026-11-26T05:00:00Z), which the plugin hashes into a run's names so that argo retry gets new ones; empty: names without it")
	flags.StringArrayVarP(&o.params, "parameter", "p", nil, "NAME=VALUE: sets inputs.parameters.NAME and workflow.parameters.NAME (repeatable)")
	flags.StringVar(&o.templatesDir, "templates-dir", "", "directory overriding the built-in object templates, as for serve")
	flags.StringVar(&o.run.Defaults.Launcher, "launcher", spec.LauncherNative, "the launcher of bodies whose sparkplug.launcher names none, as for serve: native or spark-submit")
	flags.StringVar(&o.run.Submit.SparkHome, "spark-home", render.PlaceholderSparkHome, "the Spark distribution of the spark-submit launcher, as for serve")
	flags.DurationVar(&o.run.Submit.RequestTimeout, "kubernetes-request-timeout", submit.DefaultRequestTimeout, "spark-submit's timeout against the API server, as for serve (0: Spark's default)")
	flags.StringVar(&o.run.Defaults.IngressURLFormat, "ingress-url-format", "", "the Spark UI Ingress's URL format of steps that set none, as for serve")
	flags.StringVar(&o.run.Defaults.IngressClassName, "ingress-class-name", "", "the class of Ingresses of steps that set none, as for serve")
	policyFlags(flags, &o.run.Policy)
	return flags
}

func renderMain(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	o := renderOptions{}
	flags := renderFlags(&o, stdout)
	if err := parseFlags(flags, "render", args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return usageError("render", fmt.Errorf("unexpected arguments %q; give the file with -f", flags.Args()))
	}
	if err := o.validate(); err != nil {
		return usageError("render", err)
	}
	if err := inputExists(o.file); err != nil {
		return err
	}

	name := o.file
	var input []byte
	var err error
	if o.file == "-" {
		name = "<stdin>"
		input, err = io.ReadAll(stdin)
	} else {
		input, err = os.ReadFile(o.file)
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	var tmpl fs.FS = templates.FS
	if o.templatesDir != "" {
		tmpl = os.DirFS(o.templatesDir)
	}
	builder, err := objects.New(tmpl)
	if err != nil {
		return err
	}
	steps, err := render.Render(input, builder, o.run)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	for _, st := range steps {
		where := name
		if st.Template != "" {
			where += ": template " + st.Template
		}
		for _, w := range st.Warnings {
			fmt.Fprintf(stderr, "warning: %s: %s\n", where, redact.Value(w))
		}
	}
	for _, p := range render.UnknownParameters(steps, o.run) {
		fmt.Fprintf(stderr, "warning: %s: -p %s: no step declares or uses a parameter %s; it changes nothing\n", name, p, p)
	}
	if o.output == outputJSON {
		items, err := render.Objects(steps)
		if err == nil {
			err = writeList(stdout, items)
		}
		if err != nil {
			return err
		}
	} else if err := render.Write(stdout, steps); err != nil {
		return err
	}
	return render.Errors(name, steps)
}
