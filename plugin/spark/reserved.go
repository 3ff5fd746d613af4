package spark

import "strings"

// Reserved says who sets a reserved label and why a user may not.
type Reserved struct {
	// Spark: Spark sets it on its pods itself, and spark-submit refuses it
	// in spark.kubernetes.{driver,executor}.label.*.
	Spark bool
	// Why is what a refusal says.
	Why string
}

// ReservedLabels are the label keys Spark or sparkplug set on Spark pods,
// which a body's labels may not set: the one table spec validation, the
// builder and the spark-submit launcher read.
var ReservedLabels = map[string]Reserved{
	LabelRole:              {true, "sparkplug sets it to driver or executor, and Spark finds its executors by it"},
	LabelAppSelector:       {true, "sparkplug sets it to the application id, and Spark finds its executors by it"},
	LabelAppName:           {true, "sparkplug sets it to the application name"},
	LabelExecID:            {true, "Spark sets it to each executor's id and finds the executors by it"},
	LabelVersion:           {true, "Spark sets it to the Spark version"},
	LabelResourceProfileID: {true, "Spark sets it to each executor's resource profile"},
	LabelManagedBy:         {false, "sparkplug sets it to " + ManagedByValue + " on what it creates"},
	// The Spark operator's labels (words.go): the two sparkplug sets, like
	// spark-app-name and spark-app-selector, and the one it never sets.
	LabelOperatorAppName:      {false, "sparkplug sets it on the driver and executors to the application name, as spark-app-name"},
	LabelOperatorSubmissionID: {false, "sparkplug sets it on the driver and executors to the attempt's application id"},
	LabelOperatorLaunchedBy:   {false, "the Spark operator would take the pods for its own (its pod cache and mutating webhook select pods by this label), and sparkplug never sets it"},
}

// OperatorLabel reports whether key is one of the Spark operator's labels
// that sparkplug sets on the driver and executors.
func OperatorLabel(key string) bool {
	return key == LabelOperatorAppName || key == LabelOperatorSubmissionID
}

// SparkOwnLabel reports whether Spark sets label key itself.
func SparkOwnLabel(key string) bool { return ReservedLabels[key].Spark }

// ArgoDomain is the domain of Argo's labels and annotations: Argo's
// controller selects its own pods by them, so Spark pods must never carry
// them.
const ArgoDomain = "workflows.argoproj.io"

// ReservedKey says why a label or annotation key, by its domain, is not a
// user's to set (sparkplug's bookkeeping, Argo's), or "" when it is.
func ReservedKey(key string) string {
	prefix, _, found := strings.Cut(key, "/")
	if !found {
		return ""
	}
	in := func(domain string) bool { return prefix == domain || strings.HasSuffix(prefix, "."+domain) }
	switch {
	case in(Domain):
		return "the " + Domain + "/ keys are sparkplug's bookkeeping; choose another prefix"
	case in(ArgoDomain):
		return "the " + ArgoDomain + "/ keys are Argo's, and its controller would take the Spark pods for workflow pods; choose another prefix"
	}
	return ""
}
