package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/convert"
)

const convertSummary = `Convert the Spark operator's SparkApplications and ScheduledSparkApplications
(sparkoperator.k8s.io/v1beta2) into Argo Workflows and CronWorkflows whose one
template, "spark", runs the application as a sparkplug step.

Each -f is a YAML file, a directory (its *.yaml and *.yml files, recursively) or
- for stdin; documents may be many, and Lists (kubectl get -o yaml) are expanded.
The objects go to stdout as one YAML stream (-o json: one List), or with
--output-dir DIR one file per object, named <kind>-<name>.yaml (.json).

The SparkApplication's spec (a ScheduledSparkApplication's spec.template) becomes
the spark body unchanged. A SparkApplication is one run, so its Workflow gets
generateName <name>- and is submitted once per run (argo submit FILE); --keep-names
keeps metadata.name instead. The namespace, labels and annotations stay; metadata
the API server or kubectl set (uid, resourceVersion, generation,
creationTimestamp, managedFields, last-applied-configuration, ...) is left out.
--service-account NAME sets each Workflow's serviceAccountName (a CronWorkflow's
workflowSpec's): the account its runs and Argo's agent pod use.

Everything that does not carry over as it was is reported on stderr as
FILE:LINE:COLUMN: KIND NAME: PATH: what happened, at the field's own line and
column (a missing field at its parent's): a status, owners, other kinds
(skipped), each problem the plugin would fail the step on, a schedule or zone
Argo refuses, an @every interval (written as the cron schedules of its rate), a
name longer than Argo allows (shortened with a hash), no --service-account (the
runs use the namespace's default ServiceAccount), a ScheduledSparkApplication's
missed runs (the operator catches them up; Argo only with
startingDeadlineSeconds, which convert does not set). The objects are written
all the same; the input's comments before each object and in its spark body are
kept.

Exit status: 0 when every object was written and none will certainly fail, with
or without other reports (so that set -e scripts go on; with --strict, 1 when
anything was reported); 1 when an object written will certainly fail (a spark
body the plugin refuses, a schedule or zone Argo refuses; --allow-failing
exits 0 then) or nothing could be written (no objects, none convertible); 2 on a
usage error.`

type convertOptions struct {
	files        []string
	outputDir    string
	output       outputFormat
	strict       bool
	allowFailing bool
	run          convert.Options
}

func (o *convertOptions) validate() error {
	if len(o.files) == 0 {
		return errors.New("-f is required: a file, a directory or - for stdin")
	}
	stdin := 0
	for _, f := range o.files {
		if f == "-" {
			stdin++
		}
	}
	if sa := o.run.ServiceAccount; sa != "" {
		if errs := validation.IsDNS1123Subdomain(sa); len(errs) > 0 {
			return fmt.Errorf("--service-account %q: not a ServiceAccount name: %s", sa, strings.Join(errs, "; "))
		}
	}
	if stdin > 1 {
		return errors.New("-f - given more than once: stdin is read once")
	}
	return nil
}

func runConvert(args []string, stdout, stderr io.Writer) error {
	return convertMain(args, os.Stdin, stdout, stderr)
}

// convertFlags binds convert's flags to o.
func convertFlags(o *convertOptions, stdout io.Writer) *pflag.FlagSet {
	flags := newFlagSet("convert", convertSummary, stdout)
	flags.StringArrayVarP(&o.files, "filename", "f", nil, "a YAML file, a directory of them (recursively) or - for stdin; repeatable")
	flags.SetNormalizeFunc(fileIsFilename)
	flags.StringVar(&o.outputDir, "output-dir", "", "write one file per object into this directory (created if missing) instead of to stdout")
	bindOutput(flags, &o.output)
	flags.BoolVar(&o.run.KeepNames, "keep-names", false, "name each Workflow after its SparkApplication instead of generateName <name>-")
	flags.StringVar(&o.run.ServiceAccount, "service-account", "", "the serviceAccountName of each Workflow (of each CronWorkflow's workflowSpec): the account its runs and Argo's agent pod use, which needs Argo's agent rights; empty: none, reported")
	flags.BoolVar(&o.strict, "strict", false, "exit 1 when anything was reported (the objects are written all the same)")
	flags.BoolVar(&o.allowFailing, "allow-failing", false, "exit 0 even when an object written will certainly fail (a spark body the plugin refuses, a schedule Argo refuses)")
	return flags
}

func convertMain(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	o := convertOptions{}
	flags := convertFlags(&o, stdout)
	if err := parseFlags(flags, "convert", args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return usageError("convert", fmt.Errorf("unexpected arguments %q; give the files with -f", flags.Args()))
	}
	if err := o.validate(); err != nil {
		return usageError("convert", err)
	}
	for _, f := range o.files {
		if err := inputExists(f); err != nil {
			return err
		}
	}

	sources, err := readSources(o.files, stdin)
	if err != nil {
		return err
	}
	out := newConvertOutput(o.outputDir, o.output, stdout)
	reported, objects, written, failing := 0, 0, 0, 0
	for _, src := range sources {
		if src.err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", src.name, src.err)
			reported++
			continue
		}
		for _, r := range convert.Convert(src.data, o.run) {
			objects++
			for _, f := range r.Findings {
				fmt.Fprintf(stderr, "%s: %s\n", locateFinding(src.name, r, f), f)
			}
			if len(r.Findings) > 0 {
				reported++
			}
			if r.Object == nil {
				continue
			}
			note, err := out.write(src.name, r)
			if err != nil {
				return err
			}
			if note != "" {
				fmt.Fprintf(stderr, "%s: %s\n", locate(src.name, r), note)
				reported++
			}
			written++
			if r.Fails() {
				failing++
			}
		}
	}
	if err := out.flush(); err != nil {
		return err
	}
	switch {
	case objects == 0 && reported == 0:
		return errors.New("convert: no objects in the input")
	case written == 0:
		return fmt.Errorf("convert: nothing written, %d with something to report (above)", reported)
	case failing > 0 && !o.allowFailing:
		return fmt.Errorf("convert: %d written, %d of them will certainly fail (above): fix the input, or give --allow-failing to exit 0 all the same", written, failing)
	case reported > 0 && o.strict:
		return fmt.Errorf("convert: %d written, %d with something to report (above); --strict", written, reported)
	case reported > 0:
		fmt.Fprintf(stderr, "sparkplug: convert: %d written, %d with something to report (above)\n", written, reported)
	}
	return nil
}

// source is one input: a file, or stdin.
type source struct {
	name string
	data []byte
	err  error
}

// readSources reads the -f values in order, a directory's YAML files in
// lexical order. A file that cannot be read is a source with an error,
// reported; a directory without YAML files too.
func readSources(files []string, stdin io.Reader) ([]source, error) {
	var sources []source
	for _, f := range files {
		if f == "-" {
			data, err := io.ReadAll(stdin)
			if err != nil {
				return nil, fmt.Errorf("read stdin: %w", err)
			}
			sources = append(sources, source{name: "<stdin>", data: data})
			continue
		}
		info, err := os.Stat(f)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			data, err := os.ReadFile(f)
			sources = append(sources, source{name: f, data: data, err: err})
			continue
		}
		n := len(sources)
		err = filepath.WalkDir(f, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				sources = append(sources, source{name: path, err: err})
				return nil
			}
			if d.IsDir() || (filepath.Ext(path) != ".yaml" && filepath.Ext(path) != ".yml") {
				return nil
			}
			data, err := os.ReadFile(path)
			sources = append(sources, source{name: path, data: data, err: err})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		if len(sources) == n {
			sources = append(sources, source{name: f, err: errors.New("no *.yaml or *.yml files in this directory")})
		}
	}
	return sources, nil
}

// locate is where a result came from: FILE:LINE, the List item, the kind
// and name.
func locate(file string, r convert.Result) string {
	return fmt.Sprintf("%s:%d%s", file, r.Line, identify(r))
}

// locateFinding is where a finding is: FILE:LINE:COLUMN of its field when
// known, else its object's line; then the List item, the kind and name.
func locateFinding(file string, r convert.Result, f convert.Finding) string {
	if f.Line == 0 {
		return locate(file, r)
	}
	return fmt.Sprintf("%s:%d:%d%s", file, f.Line, f.Column, identify(r))
}

// identify is ": items[N]: KIND NAME", each part when known.
func identify(r convert.Result) string {
	var b strings.Builder
	if r.Item >= 0 {
		fmt.Fprintf(&b, ": items[%d]", r.Item)
	}
	if r.Kind != "" {
		name := r.Name
		if r.Namespace != "" {
			name = r.Namespace + "/" + name
		}
		fmt.Fprintf(&b, ": %s %s", r.Kind, name)
	}
	return b.String()
}

// convertOutput writes converted objects to stdout, or one file each
// into a directory.
type convertOutput struct {
	dir    string
	format outputFormat
	stdout io.Writer
	docs   int
	files  map[string]string // file name -> the input it was written for
	// items are the objects of -o json to stdout, one List at the end.
	items []json.RawMessage
}

func newConvertOutput(dir string, format outputFormat, stdout io.Writer) *convertOutput {
	return &convertOutput{dir: dir, format: format, stdout: stdout, files: map[string]string{}}
}

// flush writes what is held until the end: -o json's List.
func (o *convertOutput) flush() error {
	if o.format != outputJSON || o.dir != "" {
		return nil
	}
	return writeList(o.stdout, o.items)
}

// write writes one object. note, when not empty, says where it went
// instead of where one would look.
func (o *convertOutput) write(file string, r convert.Result) (note string, err error) {
	y, err := convert.MarshalResult(r)
	if err != nil {
		return "", err
	}
	from := locate(file, r)
	header := "# Converted by sparkplug convert from " + from + "\n"
	ext := ".yaml"
	if o.format == outputJSON {
		// JSON has no comments: the header and the YAML's go.
		j, err := yaml.YAMLToJSON(y)
		if err != nil {
			return "", fmt.Errorf("encode %s as JSON: %w", from, err)
		}
		if o.dir == "" {
			o.items = append(o.items, j)
			return "", nil
		}
		var indented bytes.Buffer
		if err := json.Indent(&indented, j, "", "  "); err != nil {
			return "", fmt.Errorf("encode %s as JSON: %w", from, err)
		}
		y, header, ext = append(indented.Bytes(), '\n'), "", ".json"
	}
	if o.dir == "" {
		sep := ""
		if o.docs > 0 {
			sep = "---\n"
		}
		o.docs++
		_, err := fmt.Fprintf(o.stdout, "%s%s%s", sep, header, y)
		return "", err
	}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return "", err
	}
	name := strings.TrimSuffix(r.Object.GetName()+r.Object.GetGenerateName(), "-")
	base := strings.ToLower(r.Object.GetObjectKind().GroupVersionKind().Kind) + "-" + name
	fileName := base + ext
	for i := 2; o.files[fileName] != ""; i++ {
		fileName = fmt.Sprintf("%s-%d%s", base, i, ext)
	}
	if fileName != base+ext {
		note = fmt.Sprintf("written to %s: %s%s holds %s", fileName, base, ext, o.files[base+ext])
	}
	o.files[fileName] = from
	path := filepath.Join(o.dir, fileName)
	if err := os.WriteFile(path, append([]byte(header), y...), 0o644); err != nil {
		return "", err
	}
	_, err = fmt.Fprintln(o.stdout, path)
	return note, err
}
