package examples

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	preview "github.com/sparkplug-io/sparkplug/plugin/render"
)

// TestRenderEveryExampleWithoutWarning: `sparkplug render -f` of every
// example, as a user first tries one, gives no warning: each one says what
// Argo would do differently from the preview, and an example runs as
// written. A file whose only spark steps come through templateRef renders
// from its WorkflowTemplate's file, so render refuses it as having none.
func TestRenderEveryExampleWithoutWarning(t *testing.T) {
	b := newBuilder(t)
	for _, f := range exampleFiles(t) {
		t.Run(f, func(t *testing.T) {
			input, err := os.ReadFile(filepath.Join(".", f))
			if err != nil {
				t.Fatal(err)
			}
			steps, err := preview.Render(input, b, preview.Options{})
			if err != nil {
				if strings.Contains(err.Error(), "no spark step found") && strings.Contains(string(input), "templateRef:") {
					t.Skipf("its spark steps are in another file, through templateRef: %v", err)
				}
				t.Fatal(err)
			}
			if len(steps) == 0 {
				t.Fatal("no step rendered")
			}
			for _, st := range steps {
				for _, w := range st.Warnings {
					t.Errorf("template %s: warning: %s", st.Template, w)
				}
				if st.Err != nil {
					t.Errorf("template %s: %v", st.Template, st.Err)
				}
			}
			if err := preview.Errors(f, steps); err != nil {
				t.Error(err)
			}
		})
	}
}
