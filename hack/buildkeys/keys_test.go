package buildkeys

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// scripts are the build scripts with a cache key, and a pin file of each
// (relative to the repository).
var scripts = map[string]string{
	"tools":    "hack/tools/kwok/go.mod",
	"servers":  "hack/servers/versitygw/go.mod",
	"helm":     "hack/helm/go.mod",
	"kueue":    "hack/kueue/go.mod",
	"node":     "hack/node/kubelet/go.mod",
	"operator": "hack/operator/go.mod",
}

// copyTree copies the repository's files a key reads into a temp dir.
func copyTree(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	for _, p := range []string{"hack", "go.mod", "go.sum", "plugin/submit/testdata/fakesubmit"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("cp", "-R", filepath.Join(root, p), filepath.Join(dst, p)).CombinedOutput(); err != nil {
			t.Fatalf("copy %s: %v\n%s", p, err, out)
		}
	}
	return dst
}

func key(t *testing.T, root, script string) string {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(root, "hack", script+".sh"), "key")
	cmd.Env = append(os.Environ(), "SPARKPLUG_CACHE="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/%s.sh key: %v", script, err)
	}
	k := strings.TrimSpace(string(out))
	if len(k) != 12 {
		t.Fatalf("hack/%s.sh key = %q, want 12 hex digits", script, k)
	}
	return k
}

func appendTo(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// insertAfterShebang puts text right after a script's first line.
func insertAfterShebang(t *testing.T, path, text string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := strings.Cut(string(b), "\n")
	if err := os.WriteFile(path, []byte(first+"\n"+text+rest), 0o755); err != nil {
		t.Fatal(err)
	}
}

// afterLib puts text right after the line of a script that sources
// hack/lib.sh: where a script defines its functions.
func afterLib(t *testing.T, path, text string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "/lib.sh\"\n")
	if i < 0 {
		t.Fatalf("%s does not source hack/lib.sh", path)
	}
	i += len("/lib.sh\"\n")
	if err := os.WriteFile(path, []byte(s[:i]+text+s[i:]), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestKeysHashWhatMakesABuildOnly(t *testing.T) {
	for script, pin := range scripts {
		t.Run(script, func(t *testing.T) {
			t.Parallel()
			root := copyTree(t)
			base := key(t, root, script)
			if again := key(t, root, script); again != base {
				t.Fatalf("two keys of one tree: %s and %s", base, again)
			}
			rel := exec.Command("bash", "hack/"+script+".sh", "key")
			rel.Dir = root
			if out, err := rel.Output(); err != nil || strings.TrimSpace(string(out)) != base {
				t.Fatalf("the key called by a relative path is %q (%v), by an absolute one %s", out, err, base)
			}
			// What makes no build: a comment in the script's usage, the
			// shared skeleton.
			insertAfterShebang(t, filepath.Join(root, "hack", script+".sh"), "# a line of usage added\n")
			appendTo(t, filepath.Join(root, "hack", "lib.sh"), "\n# a comment added\nlib_helper_added() { :; }\n")
			if got := key(t, root, script); got != base {
				t.Errorf("a comment and an edit of hack/lib.sh changed the key %s -> %s: every cached build would be rebuilt", base, got)
			}
			// What makes a build: a function of the script.
			afterLib(t, filepath.Join(root, "hack", script+".sh"), "build_step_added() { echo extra; }\n")
			withFunc := key(t, root, script)
			if withFunc == base {
				t.Errorf("a build function added left the key %s: its build would not be rebuilt", base)
			}
			// And its pins.
			appendTo(t, filepath.Join(root, pin), "\n// a pin changed\n")
			if got := key(t, root, script); got == withFunc {
				t.Errorf("%s changed and the key stayed %s", pin, got)
			}
		})
	}
}
