package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "kustomize:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("kustomize", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "write the YAML here instead of to stdout")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("usage: kustomize [-out FILE] DIR")
	}
	yml, err := render(fs.Arg(0))
	if err != nil {
		return err
	}
	if *out != "" {
		return os.WriteFile(*out, yml, 0o644)
	}
	_, err = stdout.Write(yml)
	return err
}

// render is `kubectl kustomize dir` with no flags: kustomize's default
// options but the order, which kubectl leaves to the kustomization
// (krusty.MakeDefaultOptions keeps the input order instead).
func render(dir string) ([]byte, error) {
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionUnspecified
	m, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize %s: %w", dir, err)
	}
	yml, err := m.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("kustomize %s: %w", dir, err)
	}
	return yml, nil
}
