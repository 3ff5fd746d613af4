package redact

import (
	"slices"
	"strings"
	"testing"
)

// The controller's log keeps spark-submit's options and the conf keys,
// and no value an author gave, whatever its name.
func TestArgsKeys(t *testing.T) {
	args := []string{
		"--master", "k8s://https://10.0.0.1:443", "--deploy-mode", "cluster", "--name", "pi",
		"--conf", "spark.executorEnv.DB_URL=plain-leak01",
		"-c", "spark.hadoop.fs.s3a.secret.key=leak02",
		"--conf=spark.app.note=leak03",
		"https://u:leak04@repo.example.com/app.jar",
		"--pw", "leak05", "positional-leak06",
	}
	orig := slices.Clone(args)
	got := ArgsKeys(args, 3)
	want := []string{
		"--master", "k8s://https://10.0.0.1:443", "--deploy-mode", "cluster", "--name", "pi",
		"--conf", "spark.executorEnv.DB_URL=" + Omitted,
		"-c", "spark.hadoop.fs.s3a.secret.key=" + Omitted,
		"--conf=spark.app.note=" + Omitted,
		"https://u:" + Redacted + "@repo.example.com/app.jar",
		Omitted, Omitted, Omitted,
	}
	if !slices.Equal(got, want) {
		t.Errorf("ArgsKeys:\n got %q\nwant %q", got, want)
	}
	if strings.Contains(strings.Join(got, " "), "leak") {
		t.Errorf("ArgsKeys shows a value: %q", got)
	}
	if !slices.Equal(args, orig) {
		t.Errorf("ArgsKeys changed its input: %q", args)
	}
	if got := ArgsKeys([]string{"a"}, 5); !slices.Equal(got, []string{Omitted}) {
		t.Errorf("more application arguments than arguments: %q", got)
	}
}
