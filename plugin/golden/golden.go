package golden

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files from what the code makes (make update)")

// Compare fails t when got differs from the golden file at path, naming
// the first line that differs; with -update it writes got there instead.
func Compare(t testing.TB, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (make update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (make update rewrites it; review the diff):\n%s", path, FirstDiff(string(want), got))
	}
}

// FirstDiff shows the first line where want and got differ.
func FirstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n  golden: %q\n  got:    %q", i+1, wl, gl)
		}
	}
	return "(no line differs)"
}
