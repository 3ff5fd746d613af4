package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"
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
