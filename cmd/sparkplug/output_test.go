package main

import (
	"encoding/json"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"
)

// -o json prints the objects -o yaml prints, as one kubectl List, in
// render and convert alike.
func TestOutputJSONListsTheObjectsYAMLShows(t *testing.T) {
	dag := filepath.Join("..", "..", "examples", "spark-dag.yaml")
	for _, args := range [][]string{
		{"render", "-f", dag},
		{"convert", "-f", ksoSparkPi, "-f", ksoScheduled},
	} {
		t.Run(args[0], func(t *testing.T) {
			y := runCmd(t, "", append(args, "-o", "yaml")...)
			j := runCmd(t, "", append(args, "--output", "json")...)
			if y.status() != 0 || j.status() != 0 {
				t.Fatalf("exit %d and %d: %v %v", y.status(), j.status(), y.err, j.err)
			}
			var list struct {
				APIVersion, Kind string
				Items            []map[string]any
			}
			if err := json.Unmarshal([]byte(j.stdout), &list); err != nil {
				t.Fatalf("-o json is not JSON: %v\n%s", err, j.stdout)
			}
			if list.APIVersion != "v1" || list.Kind != "List" {
				t.Errorf("-o json is a %s %s, want a v1 List", list.APIVersion, list.Kind)
			}
			var docs []map[string]any
			for _, d := range strings.Split(y.stdout, "\n---\n") {
				var m map[string]any
				if err := yaml.Unmarshal([]byte(d), &m); err != nil {
					t.Fatal(err)
				}
				if m != nil {
					docs = append(docs, m)
				}
			}
			if len(docs) < 2 || len(docs) != len(list.Items) {
				t.Fatalf("%d YAML documents, %d List items; want the same objects", len(docs), len(list.Items))
			}
			for i := range docs {
				if !reflect.DeepEqual(docs[i], list.Items[i]) {
					t.Errorf("object %d differs between -o yaml and -o json:\n%v\n%v", i, docs[i], list.Items[i])
				}
			}
		})
	}
}

// -f, -n and -o mean the same in every command that takes them.
func TestSharedFlagsMeanTheSame(t *testing.T) {
	want := map[string]string{"f": "filename", "n": "namespace", "o": "output"}
	for _, name := range []string{"render", "convert", "logs", "get", "run", "schedule"} {
		fs := commandFlags(t, name)
		for short, long := range want {
			f := fs.ShorthandLookup(short)
			if f == nil {
				continue
			}
			// logs -f is kubectl logs' --follow.
			if name == "logs" && short == "f" {
				if f.Name != "follow" {
					t.Errorf("logs -f is --%s, want --follow as kubectl logs", f.Name)
				}
				continue
			}
			if f.Name != long {
				t.Errorf("%s -%s is --%s, want --%s", name, short, f.Name, long)
			}
		}
	}
	for _, name := range []string{"render", "convert"} {
		fs := commandFlags(t, name)
		for _, long := range []string{"filename", "output"} {
			if fs.Lookup(long) == nil {
				t.Errorf("%s has no --%s", name, long)
			}
		}
	}
	if commandFlags(t, "render").ShorthandLookup("n") == nil || commandFlags(t, "logs").ShorthandLookup("n") == nil {
		t.Error("render and logs both take -n for the namespace")
	}
}

// commandFlags are a command's flags, as its --help lists them.
func commandFlags(t *testing.T, name string) *pflag.FlagSet {
	t.Helper()
	switch name {
	case "render":
		return renderFlags(&renderOptions{}, io.Discard)
	case "convert":
		return convertFlags(&convertOptions{}, io.Discard)
	case "logs":
		return logsFlags(&logsOptions{}, io.Discard)
	case "get":
		return getFlags(&getOptions{}, io.Discard)
	case "run":
		return runFlags(&runOptions{}, io.Discard)
	case "schedule":
		return scheduleFlags(&scheduleOptions{}, io.Discard)
	}
	t.Fatalf("no command %s", name)
	return nil
}
