package templates_test

import (
	"io/fs"
	"testing"

	"github.com/sparkplug-io/sparkplug/plugin/build"
	"github.com/sparkplug-io/sparkplug/templates"
)

func TestFSHoldsTheSkeletons(t *testing.T) {
	for _, name := range []string{build.DriverPodFile, build.ExecutorPodTemplateFile} {
		if _, err := fs.Stat(templates.FS, name); err != nil {
			t.Errorf("%s is not embedded: %v", name, err)
		}
	}
}

func TestTheBuilderAcceptsTheSkeletons(t *testing.T) {
	if _, err := build.New(templates.FS); err != nil {
		t.Fatalf("build.New(templates.FS): %v", err)
	}
}
