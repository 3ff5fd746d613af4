package spec

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// junkBody is a body with n invalid arguments, n forbidden labels, a
// value and an unknown key of size big: everything a body can make an
// error message grow by.
func junkBody(n, big int) []byte {
	var b strings.Builder
	b.WriteString(`{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar","arguments":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("{}")
	}
	b.WriteString(`],"driver":{"memory":"` + strings.Repeat("9", big) + `x","labels":{`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"workflows.argoproj.io/k%d":"v"`, i)
	}
	b.WriteString(`}},"` + strings.Repeat("k", big) + `":1}`)
	return []byte(b.String())
}

// However large and wrong a body, its message stays within the bounds
// Argo can write into the Workflow: the first MaxReportedErrors problems,
// "and N more", no echoed value longer than a few dozen bytes.
func TestAJunkBodyGivesABoundedMessage(t *testing.T) {
	raw := junkBody(20000, 100000)
	_, err := Parse(raw)
	var invalid *InvalidError
	if !errors.As(err, &invalid) {
		t.Fatalf("Parse: %v, want an *InvalidError", err)
	}
	msg := err.Error()
	if len(msg) > MaxMessageBytes {
		t.Fatalf("a %d-byte body gave a %d-byte message, over %d", len(raw), len(msg), MaxMessageBytes)
	}
	// Only the problems a message can show are kept; the rest are counted.
	if len(invalid.Errs) != MaxReportedErrors || len(invalid.Errs)+invalid.More < 40000 {
		t.Fatalf("%d problems kept and %d more counted, want %d kept and every argument and label counted", len(invalid.Errs), invalid.More, MaxReportedErrors)
	}
	want := fmt.Sprintf("and %d more problems", invalid.More)
	if !strings.Contains(msg, "spark.arguments[0]") || !strings.Contains(msg, want) {
		t.Fatalf("message %q does not name the first problem and %q", Truncate(msg, 300), want)
	}
	if strings.Contains(msg, strings.Repeat("k", maxShownBytes+1)) || strings.Contains(msg, strings.Repeat("9", maxShownBytes+1)) {
		t.Fatal("the message echoes a key or value longer than the cap")
	}
}

// When the first problems are long (here forbidden labels, each with a
// sentence on why), the message lists as many as fit and still says how
// many more there are; a key of the body is echoed no longer than a value.
// (Seen through the real Argo controller: the cut ate the count.)
func TestAMessageOfLongProblemsStillCountsTheRest(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar","driver":{"labels":{`)
	for i := range 5000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"workflows.argoproj.io/%s%d":"v"`, strings.Repeat("l", 40), i)
	}
	b.WriteString(`}},"` + strings.Repeat("k", 1000) + `":1, "driver2":{"labels":{"` + strings.Repeat("j", 1000) + `":"v"}}}`)
	_, err := Parse([]byte(b.String()))
	var invalid *InvalidError
	if !errors.As(err, &invalid) {
		t.Fatalf("Parse: %v, want an *InvalidError", err)
	}
	msg := err.Error()
	if len(msg) > MaxMessageBytes {
		t.Fatalf("%d-byte message, over %d", len(msg), MaxMessageBytes)
	}
	var more int
	if i := strings.LastIndex(msg, "; and "); i < 0 {
		t.Fatalf("message %q does not say how many more problems there are", Truncate(msg[max(len(msg)-300, 0):], 300))
	} else if _, err := fmt.Sscanf(msg[i:], "; and %d more problems", &more); err != nil {
		t.Fatalf("tail %q: %v", msg[i:], err)
	}
	listed := len(invalid.Errs) + invalid.More - more
	// These problems are long enough that fewer than MaxReportedErrors
	// fit: the count covers the ones left out.
	named := strings.Count(msg, ": Forbidden: ") + strings.Count(msg, "unknown field")
	if listed < 1 || listed >= MaxReportedErrors || named != listed {
		t.Errorf("%d problems, %d said to be more: %d listed (%d named), want 1 to %d", len(invalid.Errs)+invalid.More, more, listed, named, MaxReportedErrors-1)
	}
	if strings.Contains(msg, strings.Repeat("k", maxShownBytes+1)) {
		t.Error("the message echoes an unknown key longer than a value may be")
	}
}

func TestBoundedPath(t *testing.T) {
	long := strings.Repeat("x", 100)
	for in, want := range map[string]string{
		"spark.driver.memory":               "spark.driver.memory",
		"spark." + long:                     "spark." + Truncate(long, maxShownBytes),
		"spark.driver.labels[" + long + "]": "spark.driver.labels[" + Truncate(long, maxShownBytes) + "]",
		"spark.sparkConf[a.b]":              "spark.sparkConf[a.b]",
	} {
		if got := boundedPath(in); got != want {
			t.Errorf("boundedPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		in    string
		limit int
		want  string
	}{
		{"short", 10, "short"},
		{strings.Repeat("a", 100), 40, strings.Repeat("a", 21) + "... (79 bytes more)"},
		{"ééééééééééééééééééééééééééééé", 30, "ééééé... (48 bytes more)"},
	} {
		got := Truncate(tc.in, tc.limit)
		if got != tc.want || len(got) > tc.limit {
			t.Errorf("Truncate(%q, %d) = %q (%d bytes), want %q", tc.in, tc.limit, got, len(got), tc.want)
		}
	}
}

// Checking which validation problems fall under a decoding problem is
// linear: every path is looked up with its parents, not compared with
// every other.
func TestPathsCover(t *testing.T) {
	p := paths{"spark.driver": true, "spark.arguments[3]": true}
	for path, want := range map[string]bool{
		"spark.driver": true, "spark.driver.memory": true, "spark.driver.labels[x]": true,
		"spark.driverX": false, "spark.arguments[3]": true, "spark.arguments[3].x": true,
		"spark.arguments[30]": false, "spark.executor": false,
	} {
		if got := p.covers(path); got != want {
			t.Errorf("covers(%q) = %v, want %v", path, got, want)
		}
	}
}

// Through sparkConf a body must not write sparkplug's bookkeeping, Spark's
// own labels or Argo's keys on its pods, natively or with spark-submit:
// each such key is refused with its path.
func TestSparkConfCannotForgeSparkplugsMetadata(t *testing.T) {
	raw := `{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar","sparkConf":{
		"spark.kubernetes.driver.annotation.sparkplug.io/reported-mode":"own",
		"spark.kubernetes.driver.label.sparkplug.io/ttl-seconds":"1",
		"spark.kubernetes.driver.label.x.sparkplug.io/node":"n",
		"spark.kubernetes.executor.label.spark-role":"driver",
		"spark.kubernetes.executor.annotation.workflows.argoproj.io/node-name":"x",
		"spark.kubernetes.driver.label.team":"data",
		"spark.kubernetes.driver.annotation.example.com/owner":"me"}}`
	_, err := Parse([]byte(raw))
	var invalid *InvalidError
	if !errors.As(err, &invalid) {
		t.Fatalf("Parse: %v, want the forged keys refused", err)
	}
	var got []string
	for _, e := range invalid.Errs {
		got = append(got, e.Field)
	}
	want := []string{
		"spark.sparkConf[spark.kubernetes.driver.annotation.sparkplug.io/reported-mode]",
		"spark.sparkConf[spark.kubernetes.driver.label.sparkplug.io/ttl-seconds]",
		"spark.sparkConf[spark.kubernetes.driver.label.x.sparkplug.io/node]",
		"spark.sparkConf[spark.kubernetes.executor.annotation.workflows.argoproj.io/node-name]",
		"spark.sparkConf[spark.kubernetes.executor.label.spark-role]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("refused\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A refused label under a sparkConf key longer than a message shows is
// named in full, with the fix: copied operator YAML has
// launched-by-spark-operator, whose conf key the path cuts.
func TestSparkConfReservedLabelIsNamed(t *testing.T) {
	raw := `{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar","sparkConf":{
		"spark.kubernetes.executor.label.sparkoperator.k8s.io/launched-by-spark-operator":"true"}}`
	_, err := Parse([]byte(raw))
	if err == nil {
		t.Fatal("Parse accepted launched-by-spark-operator")
	}
	for _, want := range []string{"spark.sparkConf[spark.kubernetes.executor.label.", "label sparkoperator.k8s.io/launched-by-spark-operator: the Spark operator would take the pods for its own", "remove it"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
}

// A message never echoes a secret value: a sensitive key's value, or a
// password in a URL.
func TestMessagesHideSecretValues(t *testing.T) {
	raw := `{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"https://user:hunter2@repo.example.com/pi.jar",
		"sparkConf":{"spark.hadoop.fs.s3a.secret.key":98765},
		"hadoopConf":{"spark.hadoop.fs.s3a.access.key":"AKIAHUNTER3"},
		"driver":{"memory":"app:hunter4@tcp(db)"}}`
	_, err := Parse([]byte(raw))
	if err == nil {
		t.Fatal("want an invalid body")
	}
	for _, secret := range []string{"hunter2", "AKIAHUNTER3", "hunter4", "98765"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("message shows %q: %s", secret, err)
		}
	}
	if !strings.Contains(err.Error(), "spark.driver.memory") {
		t.Errorf("message %q does not name the field", err)
	}
}

// An unknown field costs little once the message is full: no suggestion
// is looked for, no problem kept, whatever the field's name (each here is
// one edit from a field, the costliest to suggest for). Measured in
// allocations, which do not depend on the machine's load; a suggestion
// alone took about 70 each.
func TestUnknownFieldsBeyondTheReportedOnesCostLittle(t *testing.T) {
	const n = 20000
	var b strings.Builder
	b.WriteString(`{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar"`)
	for i := range n {
		fmt.Fprintf(&b, `,"imagx%d":0`, i)
	}
	b.WriteString(`}`)
	raw := []byte(b.String())
	var err error
	allocs := testing.AllocsPerRun(1, func() { _, err = Parse(raw) })
	var invalid *InvalidError
	if !errors.As(err, &invalid) || len(invalid.Errs) != MaxReportedErrors || invalid.More != n-MaxReportedErrors {
		t.Fatalf("Parse: %v, want %d problems kept and %d counted", err, MaxReportedErrors, n-MaxReportedErrors)
	}
	if perField := allocs / n; perField > 5 {
		t.Errorf("%.0f allocations for %d unknown fields, %.1f each: want at most 5", allocs, n, perField)
	}
}
