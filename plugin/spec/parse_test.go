package spec

import (
	"errors"
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func readYAML(t testing.TB, path string) []byte {
	t.Helper()
	y, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSONStrict(y)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// The Spark operator's own example, pasted unchanged, must run.
func TestParseSparkOperatorExample(t *testing.T) {
	s, err := Parse(readYAML(t, "testdata/spark-pi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Type != TypeScala || *s.MainClass != "org.apache.spark.examples.SparkPi" || s.DriverImage() != "docker.io/apache/spark:4.0.4" ||
		*s.Driver.Memory != "512m" || *s.Executor.Instances != 1 || *s.Driver.ServiceAccount != "spark-operator-spark" ||
		s.Executor.SecurityContext == nil || *s.Executor.SecurityContext.RunAsUser != 185 || s.RestartPolicy.Type != RestartNever {
		t.Errorf("parsed %+v", s)
	}
}

func TestParseError(t *testing.T) {
	_, err := Parse([]byte(`{"type":"Scala","image":"spark:3.5.1","mainApplicationFile":"local:///app.jar","driver":{"memory":"12zz"}}`))
	var invalid *InvalidError
	if !errors.As(err, &invalid) {
		t.Fatalf("err = %v, want *InvalidError", err)
	}
	want := `invalid spark body: spark.mainClass: Required value: a Scala application needs the fully qualified class to run, e.g. org.apache.spark.examples.SparkPi; ` +
		`spark.driver.memory: Invalid value: "12zz": is not a Kubernetes quantity or Spark size like 512m`
	if err.Error() != want {
		t.Errorf("err =\n%s\nwant\n%s", err, want)
	}
	if len(invalid.Errs) != 2 {
		t.Errorf("Errs = %v, want 2", invalid.Errs)
	}
}

func TestParseReportsDecodeAndValidationProblemsTogether(t *testing.T) {
	_, err := Parse([]byte(`{"type":"Python","mainApplicationFile":5,"driver":{"memroy":"1g","cores":0},"executor":"x","sparkConf":{"spark.master":"local"}}`))
	var invalid *InvalidError
	if !errors.As(err, &invalid) {
		t.Fatalf("err = %v, want *InvalidError", err)
	}
	// mainApplicationFile and executor had the wrong type: they are not
	// also reported as missing or invalid.
	checkErrs(t, invalid.Errs, []wantErr{
		{"spark.driver.memroy", `did you mean "memory"?`},
		{"spark.executor", "must be an object, not a string"},
		{"spark.mainApplicationFile", "must be a string, not a number"},
		{"spark.image", "Required value"},
		{"spark.sparkConf[spark.master]", "Forbidden"},
		{"spark.driver.cores", "must be at least 1"},
	})
}

func TestParseIsDeterministic(t *testing.T) {
	in := []byte(`{"type":"Go","mode":"x","sparkConf":{"spark.master":"a","spark.app.id":"b","spark.kubernetes.namespace":"c"},"driver":{"labels":{"spark-role":"a","spark-app-name":"b","x y":"c"},"a":1,"b":2,"c":3}}`)
	_, first := Parse(in)
	for range 20 {
		if _, err := Parse(in); err.Error() != first.Error() {
			t.Fatalf("Parse changed its message:\n%s\n%s", first, err)
		}
	}
}

func TestParseDefaults(t *testing.T) {
	s, err := Parse([]byte(`{"type":"Python","mainApplicationFile":"local:///app.py","image":"spark:3.5.1","restartPolicy":{"type":"OnFailure","onFailureRetries":2}}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Mode != ModeCluster || *s.Driver.Cores != 1 || *s.Executor.Memory != "1g" || *s.Executor.Instances != 1 ||
		*s.RestartPolicy.OnFailureRetryInterval != 5 || *s.RestartPolicy.OnSubmissionFailureRetryInterval != 5 {
		t.Errorf("not defaulted: %+v", s)
	}
}

// FuzzParse checks that no input makes Parse panic, and that it returns
// either a spec or an *InvalidError with at least one problem. Plain
// `go test` runs the seeds only.
func FuzzParse(f *testing.F) {
	f.Add(string(readYAML(f, "testdata/spark-pi.yaml")))
	for _, seed := range []string{
		``, `null`, `{}`, `[]`, `"x"`, `1`, `{"a":`, `{"driver":null}`,
		`{"driver":{"memory":"12zz","cores":"two","env":[{"nmae":1}]}}`,
		`{"driver":{"memory":"1.5g","memoryLimit":"-1Gi"},"executor":{"instances":-1,"coreRequest":"9","coreLimit":"1"}}`,
		`{"type":"Python","mainClass":"x","mainApplicationFile":"a.py","image":"i","dynamicAllocation":{"enabled":true,"minExecutors":5,"maxExecutors":1}}`,
		`{"driver":{"sidecars":[{"name":"s","resources":{"limits":{"cpu":"lots"}}}],"template":{"spec":{}}}}`,
		`{"volumes":[{"name":"a","emptyDir":{"sizeLimit":"1Gi"}},{"name":"a"}],"executor":{"volumeMounts":[{"name":"b"}]}}`,
		`{"sparkConf":{"spark.master":1},"hadoopConf":{"spark.hadoop.x":"y"},"suspend":true,"image":"a","image":"b"}`,
		`{"driver":{"cores":1e99,"gpu":{"quantity":"x"}},"restartPolicy":{"type":"OnFailure","onFailureRetryInterval":0}}`,
		`{"driver":{"coreLimit":"1e-99999999","coreRequest":"1E+99","memory":"1e4294967297","memoryLimit":"0.5e-3Ki"}}`,
		`{"driver":{"sidecars":[{"name":"s","resources":{"limits":{"cpu":"1e-100","memory":1e300}}}]},"volumes":[{"name":"v","emptyDir":{"sizeLimit":"-.e9"}}]}`,
		`{"imagx":1,"drivr":{},"driver":{"cors":1,"template":{"spec":{"containers":[{"nmae":"c","livenessProbx":{}}]}}},"executor":{"podName":"p"}}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := Parse([]byte(in))
		if (s == nil) == (err == nil) {
			t.Fatalf("Parse(%q) = %v, %v: want exactly one of spec and error", in, s, err)
		}
		if err != nil {
			var invalid *InvalidError
			if !errors.As(err, &invalid) || len(invalid.Errs) == 0 || !strings.HasPrefix(err.Error(), "invalid spark body: ") {
				t.Fatalf("Parse(%q) error %#v", in, err)
			}
		}
	})
}
