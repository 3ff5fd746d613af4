package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// honoured is every field sparkplug acts on. Structs listed here are
// honoured with all their fields but those with a row of their own in
// Unsupported (batchSchedulerOptions.resources, ...).
var honoured = []string{
	"type", "mode", "image", "imagePullPolicy", "imagePullSecrets", "mainApplicationFile", "mainClass", "arguments",
	"sparkConf", "hadoopConf", "sparkVersion", "restartPolicy", "timeToLiveSeconds", "nodeSelector", "volumes", "deps",
	"proxyUser", "memoryOverheadFactor", "pythonVersion", "sparkConfigMap", "hadoopConfigMap", "dynamicAllocation",
	"sparkplug", "monitoring", "sparkUIOptions", "batchScheduler", "batchSchedulerOptions",
	"driverIngressOptions",
}

var honouredPod = []string{
	"cores", "coreRequest", "coreLimit", "memory", "memoryOverhead", "image", "env", "envVars", "envFrom",
	"labels", "annotations", "serviceAccount", "nodeSelector", "tolerations", "securityContext", "podSecurityContext",
	"affinity", "volumeMounts", "javaOptions", "schedulerName", "priorityClassName", "terminationGracePeriodSeconds",
	"configMaps", "secrets", "gpu", "hostNetwork", "dnsConfig", "hostAliases", "shareProcessNamespace",
	"runtimeClassName", "initContainers", "sidecars", "lifecycle", "ports", "envSecretKeyRefs", "template",
}

// honouredSparkplug is every field of the sparkplug block, sparkplug's own.
var honouredSparkplug = []string{"pendingTimeout", "launcher", "uiIngress", "historyServerURL", "archiveLogs", "kueue"}

var honouredRole = map[string][]string{
	"driver":   {"memoryLimit", "serviceAnnotations", "serviceLabels", "kubernetesMaster"},
	"executor": {"instances", "deleteOnTermination"},
}

// Every field of the types is either honoured or in Unsupported, never
// both, so a field added to types.go cannot be silently ignored.
func TestEveryFieldIsHonouredOrUnsupported(t *testing.T) {
	want := map[string]bool{}
	for _, f := range honoured {
		want["spark."+f] = true
	}
	for _, role := range []string{"driver", "executor"} {
		for _, f := range append(honouredPod, honouredRole[role]...) {
			want["spark."+role+"."+f] = true
		}
	}
	for _, f := range honouredSparkplug {
		want["spark.sparkplug."+f] = true
	}
	unsupported := map[string]bool{}
	for _, u := range Unsupported {
		if u.Value == "" {
			unsupported[u.Path] = true
		}
	}

	var fields []string
	for _, name := range jsonFields(reflect.TypeFor[SparkApplicationSpec]()).names {
		if name == "driver" || name == "executor" {
			continue
		}
		fields = append(fields, "spark."+name)
	}
	for role, typ := range map[string]reflect.Type{"driver": reflect.TypeFor[DriverSpec](), "executor": reflect.TypeFor[ExecutorSpec]()} {
		for _, name := range jsonFields(typ).names {
			fields = append(fields, "spark."+role+"."+name)
		}
	}
	for _, name := range jsonFields(reflect.TypeFor[SparkplugOptions]()).names {
		fields = append(fields, "spark.sparkplug."+name)
	}
	for _, f := range fields {
		switch {
		case want[f] && unsupported[f]:
			t.Errorf("%s is both honoured and in Unsupported", f)
		case !want[f] && !unsupported[f]:
			t.Errorf("%s is neither honoured nor in Unsupported", f)
		}
		delete(want, f)
	}
	for f := range want {
		t.Errorf("honoured field %s is not a field of the types", f)
	}
}

// unsupportedValues gives each row of Unsupported a value to set it with.
var unsupportedValues = map[string]string{
	"spark.suspend":                   `true`,
	"spark.failureRetries":            `3`,
	"spark.retryInterval":             `10`,
	"spark.driverPodDisruptionBudget": `true`,
	"spark.driver.podName":            `"driver"`,
	"spark.executor.memoryLimit":      `"2g"`,
}

// unsupportedContext is what else a row's body needs to be valid
// otherwise.
var unsupportedContext = map[string]string{}

// Each row is rejected with its path and its Why, whether the types have
// the field (Validate) or not (Decode).
func TestUnsupportedRowsAreRejected(t *testing.T) {
	const base = `"type":"Scala","image":"i:1","mainClass":"C","mainApplicationFile":"local:///a.jar"`
	for _, u := range Unsupported {
		t.Run(u.Path, func(t *testing.T) {
			v, ok := unsupportedValues[u.Path]
			if !ok {
				t.Fatalf("no value to set %s with; add one to unsupportedValues", u.Path)
			}
			if u.Why == "" || !strings.HasPrefix(u.Path, "spark.") {
				t.Errorf("row %+v needs a spark. path and a Why", u)
			}
			// Nest the value under its path.
			parts := strings.Split(strings.TrimPrefix(u.Path, "spark."), ".")
			body := v
			for i := len(parts) - 1; i >= 0; i-- {
				body = fmt.Sprintf(`{%q:%s}`, parts[i], body)
			}
			if extra, ok := unsupportedContext[u.Path]; ok {
				body = `{` + extra + `,` + body[1:]
			}
			body = `{` + base + `,` + body[1:]
			_, err := Parse([]byte(body))
			if err == nil {
				t.Fatalf("Parse(%s) accepted %s", body, u.Path)
			}
			invalid := err.(*InvalidError)
			checkErrs(t, invalid.Errs, []wantErr{{u.Path, "Forbidden: not supported yet by sparkplug: " + u.Why}})
		})
	}
}

// referenceRow is a row of the field reference, docs/reference.md: the fields it names
// (rooted at "spark"), with a value when the row is about one value only.
type referenceRow struct {
	path, value string
	rejected    bool
}

// readmeReference parses the table of docs/reference.md's "The spark body:
// field reference" section: | `field`[, `field`...] | honoured or rejected | how |,
// a field written `path: value` for one value of it.
func readmeReference(t *testing.T) []referenceRow {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "reference.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	if !strings.HasPrefix(text, "# The spark body: field reference\n") {
		t.Fatal(`docs/reference.md does not open with "# The spark body: field reference"`)
	}
	section := text
	if end := strings.Index(section[1:], "\n## "); end >= 0 {
		section = section[:end+1]
	}
	var rows []referenceRow
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			t.Errorf("docs/reference.md row %q: want | field | honoured or rejected | how |", line)
			continue
		}
		status := strings.TrimSpace(cells[2])
		if status != "honoured" && status != "rejected" {
			t.Errorf("docs/reference.md row %q: status %q, want honoured or rejected", line, status)
			continue
		}
		if strings.TrimSpace(cells[3]) == "" {
			t.Errorf("docs/reference.md row %q says nothing about how", line)
		}
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cells[1], -1) {
			path, value, _ := strings.Cut(m[1], ": ")
			rows = append(rows, referenceRow{path: "spark." + path, value: value, rejected: status == "rejected"})
		}
	}
	if len(rows) == 0 {
		t.Fatal("docs/reference.md has no rows")
	}
	return rows
}

// docs/reference.md says of every field what Unsupported says:
// rejected exactly when it has a row there. It names every field of the
// types, and every field of a struct only partly honoured.
func TestReadmeReferenceMatchesSupport(t *testing.T) {
	rows := readmeReference(t)
	type key struct{ path, value string }
	listed := map[key]referenceRow{}
	for _, r := range rows {
		k := key{r.path, r.value}
		if _, dup := listed[k]; dup {
			t.Errorf("docs/reference.md lists %s %s twice", r.path, r.value)
		}
		listed[k] = r
	}
	unsupported := map[key]bool{}
	for _, u := range Unsupported {
		unsupported[key{u.Path, u.Value}] = true
		r, ok := listed[key{u.Path, u.Value}]
		switch {
		case !ok:
			t.Errorf("docs/reference.md does not list %s (rejected: %s)", show(u.Path, u.Value), u.Why)
		case !r.rejected:
			t.Errorf("docs/reference.md says %s is honoured, but it is in Unsupported: %s", show(u.Path, u.Value), u.Why)
		}
	}
	for _, r := range rows {
		if r.rejected && !unsupported[key{r.path, r.value}] {
			t.Errorf("docs/reference.md says %s is rejected, but it is not in Unsupported", show(r.path, r.value))
		}
	}

	// Every field, and every sub-field of a struct with a field in Unsupported.
	var want []string
	for _, name := range jsonFields(reflect.TypeFor[SparkApplicationSpec]()).names {
		if name != "driver" && name != "executor" {
			want = append(want, "spark."+name)
		}
	}
	for role, typ := range map[string]reflect.Type{"driver": reflect.TypeFor[DriverSpec](), "executor": reflect.TypeFor[ExecutorSpec]()} {
		for _, name := range jsonFields(typ).names {
			want = append(want, "spark."+role+"."+name)
		}
	}
	for _, u := range Unsupported {
		parent := u.Path[:strings.LastIndex(u.Path, ".")]
		if parent == "spark" || strings.Count(parent, ".") < 1 {
			continue
		}
		if typ, ok := typeAt(reflect.TypeFor[SparkApplicationSpec](), strings.TrimPrefix(parent, "spark.")); ok {
			for _, name := range jsonFields(typ).names {
				want = append(want, parent+"."+name)
			}
		}
	}
	slices.Sort(want)
	for _, f := range slices.Compact(want) {
		if _, ok := listed[key{f, ""}]; !ok {
			t.Errorf("docs/reference.md does not list %s", f)
		}
	}
}

// typeAt is the struct type at a dotted path of JSON field names.
func typeAt(t reflect.Type, dotted string) (reflect.Type, bool) {
	for _, name := range strings.Split(dotted, ".") {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		f, ok := jsonFields(t).byName[name]
		if !ok {
			return nil, false
		}
		t = t.FieldByIndex(f.index).Type
	}
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	return t, t.Kind() == reflect.Struct
}

func show(path, value string) string {
	if value == "" {
		return path
	}
	return path + ": " + value
}
