package submit

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// What spark-submit prints when the driver pod exists already (Spark 3.5,
// fabric8 6), shortened.
const alreadyExists = `25/01/31 12:00:00 WARN NativeCodeLoader: Unable to load native-hadoop library for your platform... using builtin-java classes where applicable
25/01/31 12:00:01 INFO SparkKubernetesClientFactory: Auto-configuring K8S client using current context from users K8S config file
25/01/31 12:00:02 INFO KerberosConfDriverFeatureStep: You have not specified a krb5.conf file locally or via a ConfigMap.
Exception in thread "main" io.fabric8.kubernetes.client.KubernetesClientException: Failure executing: POST at: https://10.96.0.1/api/v1/namespaces/data/pods. Message: pods "etl-1a2b3c4d-driver" already exists. Received status: Status(code=409, reason=AlreadyExists).
	at io.fabric8.kubernetes.client.dsl.internal.OperationSupport.requestFailure(OperationSupport.java:660)
	at io.fabric8.kubernetes.client.dsl.internal.OperationSupport.assertResponseCode(OperationSupport.java:640)
	at org.apache.spark.deploy.SparkSubmit.main(SparkSubmit.scala)
25/01/31 12:00:02 INFO ShutdownHookManager: Shutdown hook called
`

func TestLines(t *testing.T) {
	for _, tc := range []struct {
		name, stderr string
		want         []string
	}{
		{"the exception, not the stack nor the INFO lines", alreadyExists, []string{
			`Exception in thread "main" io.fabric8.kubernetes.client.KubernetesClientException: Failure executing: POST at: https://10.96.0.1/api/v1/namespaces/data/pods. Message: pods "etl-1a2b3c4d-driver" already exists. Received status: Status(code=409, reason=AlreadyExists).`,
		}},
		{"the last few, in order, causes included, log times dropped", strings.Join([]string{
			"25/01/31 12:00:00 ERROR Client: first",
			"java.lang.IllegalArgumentException: two",
			"\tat x.y(Z.java:1)",
			"Caused by: java.io.IOException: three",
			"\t... 12 more",
			"2025-01-31T12:00:00.123 ERROR four",
			"Exception in thread \"main\" org.apache.spark.SparkException: five",
		}, "\n"), []string{"Caused by: java.io.IOException: three", "ERROR four", `Exception in thread "main" org.apache.spark.SparkException: five`}},
		{"the same line twice in a row once", "Error: x\nError: x\n", []string{"Error: x"}},
		{"no exception: the last line", "usage: spark-submit [options]\n  --master MASTER_URL\n\n", []string{"--master MASTER_URL"}},
		{"nothing", "\n \n", nil},
		{"long lines cut", "Exception: " + strings.Repeat("x", 400), []string{"Exception: " + strings.Repeat("x", lineChars-3-len("Exception: ")) + "..."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Lines(tc.stderr); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Lines:\ngot  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestMessage(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Result
		want string
	}{
		{"success", Result{Started: true}, ""},
		{"exit code and the exception", Result{Started: true, ExitCode: 1, Stderr: "INFO x\nException in thread \"main\" java.lang.RuntimeException: boom\n\tat a.b\n"},
			`spark-submit exited 1: Exception in thread "main" java.lang.RuntimeException: boom`},
		{"exit code, silent", Result{Started: true, ExitCode: 101}, "spark-submit exited 101"},
		{"timeout", Result{Started: true, ExitCode: -1, TimedOut: true, Stderr: "INFO still resolving\n"}, "spark-submit did not finish within 2m0s: INFO still resolving"},
		{"not runnable", Result{ExitCode: -1, Err: errors.New("fork/exec /opt/spark/bin/spark-submit: no such file or directory")},
			"cannot run spark-submit: fork/exec /opt/spark/bin/spark-submit: no such file or directory"},
		{"killed from outside", Result{Started: true, ExitCode: -1, Err: errors.New("signal: killed")}, "spark-submit was stopped: signal: killed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Message(tc.r, 2*time.Minute); got != tc.want {
				t.Errorf("Message = %q, want %q", got, tc.want)
			}
		})
	}
}

// spark-submit's words reach the node's message with their secrets hidden.
func TestMessageHidesSecrets(t *testing.T) {
	r := Result{Started: true, ExitCode: 1, Stderr: "Exception in thread \"main\" java.io.IOException: cannot fetch https://build:s3cr3t@repo.example.com/udfs.jar\n"}
	if got := Message(r, time.Minute); strings.Contains(got, "s3cr3t") || !strings.Contains(got, "https://build:") {
		t.Fatalf("Message = %q", got)
	}
}
