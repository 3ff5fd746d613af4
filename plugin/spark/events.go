package spark

// The reasons of the Events sparkplug records, all on the Workflow: by
// the sidecar or the controller (package execute) and by the monitor. They are part of the stable interface: README's "Events"
// table documents each, and TestReadmeListsEveryEventReason fails when an
// Event is recorded, here or elsewhere, with a reason it lacks.
const (
	// One per state change of a driver (stateEvent).
	ReasonSubmitted        = "SparkSubmitted"
	ReasonRunning          = "SparkRunning"
	ReasonCompleted        = "SparkCompleted"
	ReasonFailed           = "SparkFailed"
	ReasonPendingRerun     = "SparkPendingRerun"
	ReasonSubmissionFailed = "SparkSubmissionFailed"
	ReasonUnknown          = "SparkUnknown"
	// ReasonOtherState is a driver state with no reason of its own: none
	// has today; a state added later still gets an Event.
	ReasonOtherState = "SparkState"

	// ReasonDriverDeleted: a running driver of an ending workflow was
	// deleted (cleanup/sweep.go, cleanup/leftovers.go).
	ReasonDriverDeleted = "SparkDriverDeleted"
	// ReasonDriverExpired: a finished driver's timeToLiveSeconds ran out
	// and it was deleted (cleanup/ttl.go, cleanup/leftovers.go).
	ReasonDriverExpired = "SparkDriverExpired"
	// ReasonObjectRefused: the API server refused an object the
	// application runs without (execute/launch.go).
	ReasonObjectRefused = "SparkObjectRefused"
	// ReasonForgedObject: an object looks like one of a node's run (its
	// name, labels and owner) but sparkplug did not make it; it is left
	// as it is (execute/trust.go).
	ReasonForgedObject = "SparkForgedObject"
	// ReasonWorkflowRefused: the Workflow's node status is over what
	// sparkplug reads of one, or not readable (scope's nodes.go); its
	// Spark steps fail.
	ReasonWorkflowRefused = "SparkWorkflowRefused"
)

// Event reasons of a step queued with Kueue (execute/kueue.go).
const (
	// ReasonQueued: an attempt's Workload was created; it waits for
	// Kueue to admit it.
	ReasonQueued = "SparkQueued"
	// ReasonEvicted: Kueue evicted a running attempt's Workload and its
	// driver was stopped.
	ReasonEvicted = "SparkEvicted"
)

// Event reasons of log archiving.
const (
	ReasonDriverLogArchived    = "SparkDriverLogArchived"
	ReasonDriverLogNotArchived = "SparkDriverLogNotArchived"
)

// Output parameter names every spark node reports.
const (
	OutputApplicationID = "application-id"
	OutputDriverPod     = "driver-pod"
	OutputSparkUI       = "spark-ui"
	OutputAttempt       = "attempt"
	// OutputDriverUID is the driver pod's uid: recorded with the node's
	// result, it is the one driver of its attempt that counts.
	OutputDriverUID = "driver-uid"
	// OutputHistoryUI is the application's page on the Spark History
	// Server, reported only when the step has one
	// (sparkplug.historyServerURL, or --history-server-url): it
	// still answers once the driver, and with it the spark-ui, is gone.
	OutputHistoryUI = "history-ui"
)

// OutputDriverLog is the node's output artifact that holds its archived
// driver log (package archive).
const OutputDriverLog = "driver-log"
