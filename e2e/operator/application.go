package operator

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// SparkApplicationResource is the resource of SparkApplications, for the
// dynamic client.
var SparkApplicationResource = schema.GroupVersionResource{Group: Group, Version: "v1beta2", Resource: "sparkapplications"}

// States of status.applicationState.state (v1beta2.ApplicationStateType);
// a new application has none.
const (
	StateSubmitted        = "SUBMITTED"
	StateRunning          = "RUNNING"
	StateSucceeding       = "SUCCEEDING"
	StateCompleted        = "COMPLETED"
	StateFailing          = "FAILING"
	StateFailed           = "FAILED"
	StateFailedSubmission = "SUBMISSION_FAILED"
)

// Labels the operator passes spark-submit for the driver and executor
// pods (spark.kubernetes.{driver,executor}.label.*): its pod informer
// sees only pods with LabelLaunchedBy, and follows a driver only while
// its LabelSubmissionID is the application's status.submissionID.
const (
	LabelAppName      = Group + "/app-name"
	LabelLaunchedBy   = Group + "/launched-by-spark-operator"
	LabelSubmissionID = Group + "/submission-id"
)

// Executors is the executor count of SparkApplication's application.
const Executors = 1

// SparkApplication is examples/spark-pi.yaml's Spark step as a
// SparkApplication: its spark body (the SparkApplication spec, field names
// unchanged) with one executor instead of two, and driverAnnotations on
// the driver pod (e.g. sim.Succeed(d).Annotations(), which the e2e Stages
// read). TestSparkApplicationIsTheExample keeps the two alike.
//
// It is built as unstructured rather than with the operator's API types,
// which would bring its module (and Kubernetes 0.32 pins) into this
// module's graph.
func SparkApplication(name, namespace string, driverAnnotations map[string]string) *unstructured.Unstructured {
	driver := map[string]any{
		"cores":          int64(1),
		"memory":         "512m",
		"serviceAccount": "spark",
	}
	if len(driverAnnotations) > 0 {
		annotations := map[string]any{}
		for k, v := range driverAnnotations {
			annotations[k] = v
		}
		driver["annotations"] = annotations
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": SparkApplicationResource.GroupVersion().String(),
		"kind":       "SparkApplication",
		"metadata":   map[string]any{"name": name, "namespace": namespace},
		"spec": map[string]any{
			"type":                "Scala",
			"mode":                "cluster",
			"image":               "apache/spark:4.0.4",
			"sparkVersion":        "4.0.4",
			"mainClass":           "org.apache.spark.examples.SparkPi",
			"mainApplicationFile": "local:///opt/spark/examples/jars/spark-examples_2.13-4.0.4.jar",
			"arguments":           []any{"1000"},
			"driver":              driver,
			"executor": map[string]any{
				"cores":     int64(1),
				"instances": int64(Executors),
				"memory":    "512m",
			},
		},
	}}
}

// State is the application's status.applicationState.state; "" when it
// has none yet (new).
func State(app *unstructured.Unstructured) string {
	s, _, _ := unstructured.NestedString(app.Object, "status", "applicationState", "state")
	return s
}

// ErrorMessage is the application's status.applicationState.errorMessage.
func ErrorMessage(app *unstructured.Unstructured) string {
	s, _, _ := unstructured.NestedString(app.Object, "status", "applicationState", "errorMessage")
	return s
}

// DriverPodName is the driver pod the operator follows
// (status.driverInfo.podName), set when it submits.
func DriverPodName(app *unstructured.Unstructured) string {
	s, _, _ := unstructured.NestedString(app.Object, "status", "driverInfo", "podName")
	return s
}

// SubmissionID is the id of the application's last submission
// (status.submissionID), which its driver pod carries as label
// sparkoperator.k8s.io/submission-id.
func SubmissionID(app *unstructured.Unstructured) string {
	s, _, _ := unstructured.NestedString(app.Object, "status", "submissionID")
	return s
}

// Terminal reports whether the operator is done with the application:
// COMPLETED or FAILED (SUBMISSION_FAILED is retried or turns FAILED).
func Terminal(app *unstructured.Unstructured) bool {
	s := State(app)
	return s == StateCompleted || s == StateFailed
}
