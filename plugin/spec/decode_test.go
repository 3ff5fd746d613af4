package spec

import (
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []wantErr
	}{
		{
			name: "valid body",
			in:   `{"type":"Python","mainApplicationFile":"local:///app.py","image":"spark:3.5.1","driver":{"cores":1,"memory":"1g"}}`,
		},
		{
			name: "unknown nested field with suggestion",
			in:   `{"driver":{"memroy":"2g"}}`,
			want: []wantErr{{"spark.driver.memroy", `Invalid value: "2g": unknown field "memroy"; did you mean "memory"?`}},
		},
		{
			name: "unknown field differing in case only",
			in:   `{"executor":{"Instances":2}}`,
			want: []wantErr{{"spark.executor.Instances", `unknown field "Instances"; did you mean "instances"?`}},
		},
		{
			name: "unknown field with no near name",
			in:   `{"driver":{"flavour":"large"}}`,
			want: []wantErr{{"spark.driver.flavour", `Invalid value: "large": unknown field "flavour"`}},
		},
		{
			name: "unknown field at the top",
			in:   `{"mainAplicationFile":"x.jar"}`,
			want: []wantErr{{"spark.mainAplicationFile", `unknown field "mainAplicationFile"; did you mean "mainApplicationFile"?`}},
		},
		{
			name: "unknown field inside a Kubernetes type in a list",
			in:   `{"driver":{"env":[{"name":"A","value":"1"},{"nmae":"B"}]}}`,
			want: []wantErr{{"spark.driver.env[1].nmae", `unknown field "nmae"; did you mean "name"?`}},
		},
		{
			name: "unknown field under an inlined Kubernetes struct",
			in:   `{"volumes":[{"name":"data","emptyDir":{"sizeLimit":"1Gi","mediun":"Memory"}}]}`,
			want: []wantErr{{"spark.volumes[0].emptyDir.mediun", `did you mean "medium"?`}},
		},
		{
			name: "unknown object field omits the value",
			in:   `{"driver":{"resources":{"cpu":1}}}`,
			want: []wantErr{{"spark.driver.resources", `spark.driver.resources: Invalid value: unknown field "resources"`}},
		},
		{
			name: "driver field under executor",
			in:   `{"executor":{"podName":"x"}}`,
			want: []wantErr{{"spark.executor.podName", `unknown field "podName"; it is a field of spark.driver`}},
		},
		{
			name: "executor field under driver",
			in:   `{"driver":{"instances":2}}`,
			want: []wantErr{{"spark.driver.instances", `unknown field "instances"; it is a field of spark.executor`}},
		},
		{
			name: "pod field at the top",
			in:   `{"serviceAccount":"spark"}`,
			want: []wantErr{{"spark.serviceAccount", "it is a field of spark.driver and spark.executor"}},
		},
		{
			// As kubeflow/spark-operator's examples/spark-pi-pod-template.yaml
			// has it; the operator drops these silently.
			name: "container security settings in a pod's securityContext",
			in:   `{"driver":{"podSecurityContext":{"runAsUser":185,"allowPrivilegeEscalation":false},"template":{"spec":{"securityContext":{"capabilities":{"drop":["ALL"]}}}}}}`,
			want: []wantErr{
				{"spark.driver.podSecurityContext.allowPrivilegeEscalation", `unknown field "allowPrivilegeEscalation"; it is a field of a container's securityContext, not of the pod's`},
				{"spark.driver.template.spec.securityContext.capabilities", `unknown field "capabilities"; it is a field of a container's securityContext, not of the pod's`},
			},
		},
		{
			name: "a whole SparkApplication instead of its spec",
			in:   `{"apiVersion":"sparkoperator.k8s.io/v1beta2","kind":"SparkApplication","spec":{"type":"Scala"}}`,
			want: []wantErr{
				{"spark.apiVersion", "put the SparkApplication's spec under spark, not the whole object"},
				{"spark.kind", "put the SparkApplication's spec under spark"},
				{"spark.spec", "put the SparkApplication's spec under spark"},
			},
		},
		{
			name: "Spark operator field sparkplug's types lack",
			in:   `{"suspend":false}`,
			want: []wantErr{{"spark.suspend", "Forbidden: not supported yet by sparkplug: Argo suspends workflows"}},
		},
		{
			name: "Spark operator field driverPodDisruptionBudget",
			in:   `{"driverPodDisruptionBudget":true}`,
			want: []wantErr{{"spark.driverPodDisruptionBudget", "not supported yet by sparkplug"}},
		},
		{
			name: "type error names the path and the type",
			in:   `{"driver":{"cores":"two"}}`,
			want: []wantErr{{"spark.driver.cores", `spark.driver.cores: Invalid value: "two": must be an integer, not a string`}},
		},
		{
			name: "quoted fraction (a quoted integer is accepted: Argo parameters arrive quoted)",
			in:   `{"executor":{"instances":"2.5"}}`,
			want: []wantErr{{"spark.executor.instances", "must be an integer, not a string"}},
		},
		{
			name: "fractional cores",
			in:   `{"driver":{"cores":0.5}}`,
			want: []wantErr{{"spark.driver.cores", "must be an integer, not a fraction; for part of a CPU set coreRequest, e.g. 500m"}},
		},
		{
			name: "unquoted version",
			in:   `{"sparkVersion":3.5}`,
			want: []wantErr{{"spark.sparkVersion", "must be a string, not a number; quote it"}},
		},
		{
			name: "number as a sparkConf value",
			in:   `{"sparkConf":{"spark.executor.instances":2}}`,
			want: []wantErr{{"spark.sparkConf[spark.executor.instances]", "must be a string, not a number; quote it"}},
		},
		{
			name: "a string that is no boolean (a quoted true or false is accepted)",
			in:   `{"executor":{"deleteOnTermination":"yes"}}`,
			want: []wantErr{{"spark.executor.deleteOnTermination", "must be true or false, not a string"}},
		},
		{
			name: "object where a list is expected",
			in:   `{"arguments":{"a":"b"}}`,
			want: []wantErr{{"spark.arguments", "spark.arguments: Invalid value: must be a list, not an object"}},
		},
		{
			name: "string where an object is expected",
			in:   `{"driver":"big"}`,
			want: []wantErr{{"spark.driver", `Invalid value: "big": must be an object, not a string`}},
		},
		{
			name: "integer written with an exponent",
			in:   `{"executor":{"instances":1e99}}`,
			want: []wantErr{{"spark.executor.instances", "Invalid value: 1e+99: must be an integer, not a number with a decimal point or exponent, or out of range"}},
		},
		{
			name: "integer out of range",
			in:   `{"driver":{"cores":3000000000}}`,
			want: []wantErr{{"spark.driver.cores", "must fit in a 32-bit integer"}},
		},
		{
			name: "invalid Kubernetes quantity inside a sidecar",
			in:   `{"driver":{"sidecars":[{"name":"s","image":"i","resources":{"limits":{"cpu":"lots"}}}]}}`,
			want: []wantErr{{"spark.driver.sidecars[0].resources.limits[cpu]", `Invalid value: "lots": is not a Kubernetes quantity like 500m or 1Gi`}},
		},
		{
			name: "IntOrString accepts both",
			in:   `{"driver":{"sidecars":[{"name":"s","image":"i","readinessProbe":{"httpGet":{"port":"http"}}},{"name":"t","image":"i","readinessProbe":{"httpGet":{"port":8080}}}]}}`,
		},
		{
			name: "null values are allowed",
			in:   `{"image":null,"driver":null,"sparkConf":null}`,
		},
		{
			name: "duplicate field",
			in:   `{"driver":{"memory":"1g","memory":"2g"}}`,
			want: []wantErr{{"spark.driver.memory", "duplicate field; give it once"}},
		},
		{
			name: "duplicate field and a type error",
			in:   `{"image":"a","image":"b","driver":{"cores":"x"}}`,
			want: []wantErr{
				{"spark.image", "duplicate field"},
				{"spark.driver.cores", "must be an integer"},
			},
		},
		{
			name: "every problem at once, in key order",
			in:   `{"executor":{"instances":"two","memroy":"1g"},"driver":{"cores":"x","labls":{}},"unknownTop":1}`,
			want: []wantErr{
				{"spark.driver.cores", "must be an integer"},
				{"spark.driver.labls", `did you mean "labels"?`},
				{"spark.executor.instances", "must be an integer"},
				{"spark.executor.memroy", `did you mean "memory"?`},
				{"spark.unknownTop", `unknown field "unknownTop"`},
			},
		},
		{
			name: "empty",
			in:   ``,
			want: []wantErr{{"spark", "spark: Required value: the spark body is empty; give at least mainApplicationFile and image"}},
		},
		{
			name: "blank",
			in:   " \n\t",
			want: []wantErr{{"spark", "the spark body is empty"}},
		},
		{
			name: "null",
			in:   `null`,
			want: []wantErr{{"spark", "the spark body is empty"}},
		},
		{
			name: "empty object",
			in:   `{}`,
			want: []wantErr{{"spark", "the spark body is empty"}},
		},
		{
			name: "not an object",
			in:   `["spark-pi"]`,
			want: []wantErr{{"spark", "must be an object of SparkApplication spec fields, not a list"}},
		},
		{
			name: "not JSON",
			in:   `{"image": }`,
			want: []wantErr{{"spark", "is not valid JSON"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, errs := decodeAll([]byte(tt.in))
			checkErrs(t, errs, tt.want)
			if len(tt.want) == 0 && s == nil {
				t.Fatal("Decode returned no spec and no errors")
			}
		})
	}
}

func TestDecodeFillsInlinedFields(t *testing.T) {
	s, errs := decodeAll([]byte(`{"driver":{"cores":2,"coreRequest":"500m","serviceAccount":"spark"},"executor":{"memory":"4g","instances":3}}`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if *s.Driver.Cores != 2 || *s.Driver.CoreRequest != "500m" || *s.Driver.ServiceAccount != "spark" ||
		*s.Executor.Memory != "4g" || *s.Executor.Instances != 3 {
		t.Errorf("decoded %+v / %+v", s.Driver, s.Executor)
	}
}

func TestLevenshtein(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"memory", "memory", 0},
		{"memroy", "memory", 2},
		{"memor", "memory", 1},
		{"cors", "cores", 1},
		{"kitten", "sitting", 3},
		{"", "abc", 3},
		{"größe", "grösse", 2},
	}
	for _, tt := range tests {
		if got := levenshtein(tt.a, tt.b); got != tt.want {
			t.Errorf("levenshtein(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func lowered(names []string) []string {
	var out []string
	for _, n := range names {
		out = append(out, strings.ToLower(n))
	}
	return out
}

func TestSuggest(t *testing.T) {
	known := []string{"cores", "coreLimit", "env", "gpu", "image", "memory", "memoryLimit", "memoryOverhead"}
	tests := []struct{ name, want string }{
		{"memroy", "memory"},
		{"Memory", "memory"},
		{"cors", "cores"},
		{"imag", "image"},
		{"corelimit", "coreLimit"},
		{"flavour", ""},
		{"ab", ""}, // a distance as long as the name suggests nothing
		{"gp", "gpu"},
	}
	for _, tt := range tests {
		if got := suggest(tt.name, known, lowered(known)); got != tt.want {
			t.Errorf("suggest(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// Argo substitutes parameters into the template's JSON text, so an integer
// or boolean field filled from a parameter arrives as a string.
func TestDecodeAcceptsParametersInIntegerAndBooleanFields(t *testing.T) {
	in := `{"executor":{"instances":"3","cores":" 2 ","deleteOnTermination":"false"},"timeToLiveSeconds":"600",
		"driver":{"tolerations":[{"key":"k","operator":"Exists","tolerationSeconds":"30"}]}}`
	s, errs := decodeAll([]byte(in))
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	if *s.Executor.Instances != 3 || *s.Executor.Cores != 2 || *s.Executor.DeleteOnTermination || *s.TimeToLiveSeconds != 600 ||
		*s.Driver.Tolerations[0].TolerationSeconds != 30 {
		t.Fatalf("decoded %+v", s)
	}
	// A string that holds no integer is still an error naming the field.
	if _, errs := decodeAll([]byte(`{"executor":{"instances":"{{inputs.parameters.n}}"}}`)); len(errs) != 1 || errs[0].Field != "spark.executor.instances" {
		t.Fatalf("unsubstituted parameter: %v", errs)
	}
}
