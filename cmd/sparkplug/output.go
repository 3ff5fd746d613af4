package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"
)

// outputFormat is -o/--output of the commands that print objects (render,
// convert): yaml, the default, or json, as kubectl and argo take -o. JSON
// is one kubectl List of the objects, without the comments YAML carries.
type outputFormat string

const (
	outputYAML outputFormat = "yaml"
	outputJSON outputFormat = "json"
)

func (f *outputFormat) String() string { return string(*f) }
func (f *outputFormat) Type() string   { return "yaml|json" }

func (f *outputFormat) Set(v string) error {
	switch outputFormat(v) {
	case outputYAML, outputJSON:
		*f = outputFormat(v)
		return nil
	}
	return fmt.Errorf("%q is not an output format: yaml or json", v)
}

// bindOutput adds -o/--output, yaml unless given.
func bindOutput(fs *pflag.FlagSet, f *outputFormat) {
	*f = outputYAML
	fs.VarP(f, "output", "o", "the output format: yaml, or json (one List of the objects, without comments)")
}

// writeList writes items (JSON objects) as one kubectl List, indented.
func writeList(w io.Writer, items []json.RawMessage) error {
	if items == nil {
		items = []json.RawMessage{}
	}
	b, err := json.MarshalIndent(map[string]any{"apiVersion": "v1", "kind": "List", "items": items}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the List: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// fileIsFilename takes --file for --filename (-f): render called it so
// first, and kubectl's is --filename.
func fileIsFilename(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	if name == "file" {
		name = "filename"
	}
	return pflag.NormalizedName(name)
}

// inputExists checks that an input file given with -f exists ("-" is
// stdin). A missing one is a failure, exit status 1, as for any file that
// is not what was expected, not a usage error: the command line is right,
// the file system is not as it says.
func inputExists(file string) error {
	if file == "-" {
		return nil
	}
	if _, err := os.Stat(file); err != nil {
		return fmt.Errorf("-f %s: %w", file, err)
	}
	return nil
}

// printFormat is -o/--output of the commands that print a report (get,
// run, schedule): text (the default: a table, or lines a person reads),
// wide (get only: more columns), json or yaml (a structure of documented,
// stable fields, for programs).
type printFormat struct {
	value string
	wide  bool // wide is allowed
}

const (
	printText = ""
	printWide = "wide"
	printJSON = "json"
	printYAML = "yaml"
)

func (f *printFormat) String() string { return f.value }
func (f *printFormat) Type() string {
	if f.wide {
		return "wide|json|yaml"
	}
	return "json|yaml"
}

func (f *printFormat) Set(v string) error {
	switch v {
	case printJSON, printYAML:
		f.value = v
		return nil
	case printWide:
		if f.wide {
			f.value = v
			return nil
		}
	}
	return fmt.Errorf("%q is not an output format: %s", v, strings.ReplaceAll(f.Type(), "|", ", "))
}

// structured: json or yaml.
func (f *printFormat) structured() bool { return f.value == printJSON || f.value == printYAML }

// bindPrintOutput adds -o/--output; wide says whether -o wide is taken.
func bindPrintOutput(fs *pflag.FlagSet, f *printFormat, wide bool, text string) {
	f.wide = wide
	fs.VarP(f, "output", "o", "the output format: "+strings.ReplaceAll(f.Type(), "|", ", ")+" (default: "+text+")")
}

// writeStructured writes v as indented JSON or as YAML, by f.
func writeStructured(w io.Writer, f *printFormat, v any) error {
	var b []byte
	var err error
	if f.value == printJSON {
		if b, err = json.MarshalIndent(v, "", "  "); err == nil {
			b = append(b, '\n')
		}
	} else {
		b, err = yaml.Marshal(v)
	}
	if err != nil {
		return fmt.Errorf("encode the output: %w", err)
	}
	_, err = w.Write(b)
	return err
}
