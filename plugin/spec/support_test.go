package spec

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// honoured is every field sparkplug acts on. Structs listed here are
// honoured with all their fields but those with a row of their own in
// Unsupported (sparkUIOptions.ingressTLS, ...).
var honoured = []string{
	"type", "mode", "image", "imagePullPolicy", "imagePullSecrets", "mainApplicationFile", "mainClass", "arguments",
	"sparkConf", "hadoopConf", "sparkVersion", "restartPolicy", "timeToLiveSeconds", "nodeSelector", "volumes", "deps",
	"proxyUser", "memoryOverheadFactor", "pythonVersion", "sparkConfigMap", "hadoopConfigMap", "dynamicAllocation",
	"sparkplug", "monitoring", "sparkUIOptions", "batchScheduler", "batchSchedulerOptions",
}

var honouredPod = []string{
	"cores", "coreRequest", "coreLimit", "memory", "memoryOverhead", "image", "env", "envVars", "envFrom",
	"labels", "annotations", "serviceAccount", "nodeSelector", "tolerations", "securityContext", "podSecurityContext",
	"affinity", "volumeMounts", "javaOptions", "schedulerName", "priorityClassName", "terminationGracePeriodSeconds",
	"configMaps", "secrets", "gpu", "hostNetwork", "dnsConfig", "hostAliases", "shareProcessNamespace",
	"runtimeClassName", "initContainers", "sidecars", "lifecycle", "ports", "envSecretKeyRefs", "template",
}

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
	"spark.mode":                              `"client"`,
	"spark.suspend":                           `true`,
	"spark.failureRetries":                    `3`,
	"spark.retryInterval":                     `10`,
	"spark.batchScheduler":                    `"kube-scheduler"`,
	"spark.batchSchedulerOptions.resources":   `{"cpu":"4"}`,
	"spark.sparkUIOptions.ingressAnnotations": `{"a":"b"}`,
	"spark.sparkUIOptions.ingressTLS":         `[{"secretName":"tls"}]`,
	"spark.driverIngressOptions":              `[{"servicePort":4040,"servicePortName":"ui"}]`,
	"spark.driverPodDisruptionBudget":         `true`,
	"spark.driver.podName":                    `"driver"`,
	"spark.executor.memoryLimit":              `"2g"`,
}

// unsupportedContext is what else a row's body needs to be valid
// otherwise.
var unsupportedContext = map[string]string{
	"spark.batchSchedulerOptions.resources": `"batchScheduler":"volcano"`,
}

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
