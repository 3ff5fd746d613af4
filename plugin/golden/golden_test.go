package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFirstDiff(t *testing.T) {
	for _, c := range []struct{ want, got, diff string }{
		{"a\nb\n", "a\nb\n", "(no line differs)"},
		{"a\nb\n", "a\nc\n", "line 2:\n  golden: \"b\"\n  got:    \"c\""},
		{"a\n", "a\nb\n", "line 2:\n  golden: \"\"\n  got:    \"b\""},
	} {
		if d := FirstDiff(c.want, c.got); d != c.diff {
			t.Errorf("FirstDiff(%q, %q) = %q, want %q", c.want, c.got, d, c.diff)
		}
	}
}

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, format)
}

func TestCompare(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.golden.yaml")
	if err := os.WriteFile(path, []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	same := &recorder{TB: t}
	Compare(same, path, "a: 1\n")
	if len(same.errors) != 0 {
		t.Errorf("equal content reported: %v", same.errors)
	}
	differ := &recorder{TB: t}
	Compare(differ, path, "a: 2\n")
	if len(differ.errors) != 1 || !strings.Contains(differ.errors[0], "differs") {
		t.Errorf("different content: %v, want one error", differ.errors)
	}
}
