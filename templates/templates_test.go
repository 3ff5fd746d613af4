package templates_test

import (
	"io/fs"
	"testing"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/templates"
)

func TestFSHoldsTheSkeletons(t *testing.T) {
	for _, name := range []string{objects.DriverPodFile, objects.ExecutorPodTemplateFile} {
		if _, err := fs.Stat(templates.FS, name); err != nil {
			t.Errorf("%s is not embedded: %v", name, err)
		}
	}
}

func TestTheBuilderAcceptsTheSkeletons(t *testing.T) {
	if _, err := objects.New(templates.FS); err != nil {
		t.Fatalf("objects.New(templates.FS): %v", err)
	}
}
