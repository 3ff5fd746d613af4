package execute

import (
	"time"

	"github.com/sparkplug-io/sparkplug/plugin/archive"
	"github.com/sparkplug-io/sparkplug/plugin/nodestatus"
	"github.com/sparkplug-io/sparkplug/plugin/policy"
	"github.com/sparkplug-io/sparkplug/plugin/setting"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/submit"
)

// Options tune the core. Zero values are replaced by defaults in
// Validate.
type Options struct {
	// NotFoundGrace is how long a driver missing from the cache is
	// tolerated after its creation before the attempt fails.
	NotFoundGrace time.Duration
	// Workers is how many nodes are reconciled at once.
	Workers int
	// Resync is how often every listed node is reconciled again, events
	// or not: time limits, backoffs and the running message move with
	// the clock alone.
	Resync time.Duration
	// WriteGap is the least time between two writes of one workflow's
	// TaskSet: each is an event Argo's controller answers with a Workflow
	// update.
	WriteGap time.Duration
	// HoldVanished is how long a node whose final entry vanished while
	// the TaskSet still lists it is left alone (Argo removes a fulfilled
	// node's entry first, its task next); past it, with the Workflow
	// still showing the node open, its result is written again.
	HoldVanished time.Duration
	// InterimHold is how long a node stays in a state every run passes
	// through (its driver not started yet, SUBMITTED; Kueue not admitted
	// yet, QUEUED; its driver's log being stored) before that state is
	// written (nodestatus.Rules.InterimHold): one that ends sooner costs
	// Argo no write. A result that records a new driver's uid is never
	// held (the record is the defence of trust.go). 0 writes every state
	// at once (Validate keeps it 0, as ProgressInterval's).
	InterimHold time.Duration
	// AccessWait is how long a request waits for the review of this
	// process's permission to write the TaskSet's status, the one thing
	// its reply depends on.
	AccessWait time.Duration
	// Launcher launches the drivers of bodies whose sparkplug.launcher
	// names none: spec.LauncherNative (the default) or
	// spec.LauncherSparkSubmit.
	Launcher string
	// Submit sets up the spark-submit launcher; without Submit.SparkHome,
	// a body asking for it fails.
	Submit submit.Options
	// IngressURLFormat and IngressClassName are the Spark UI Ingress's URL
	// format and the class of every Ingress, for bodies whose
	// sparkplug.uiIngress does not say (spec.PluginDefaults).
	IngressURLFormat, IngressClassName string
	// HistoryServerURL is the base URL of the Spark History Server of
	// bodies whose sparkplug.historyServerURL does not say: with it, every
	// reply that names an application id reports the history-ui output.
	HistoryServerURL string
	// ArchiveLogs stores every step's driver log in the workflow's
	// artifact repository unless its sparkplug.archiveLogs says otherwise;
	// Archive bounds the uploads.
	ArchiveLogs bool
	Archive     archive.Settings
	// MaxSubmits is how many spark-submit runs (each a JVM) may run at
	// once; a step beyond it waits, Pending, for a slot.
	MaxSubmits int
	// ProgressInterval is the step of the elapsed time a RUNNING message
	// shows ("RUNNING 3/3 executors, 4m30s", state.Elapsed): the message,
	// and with it the node's duration in the Argo UI, moves once per
	// interval, each move a write of the Workflow. 0 turns it off: unlike
	// the durations above, Validate leaves it 0 (DefaultOptions holds the
	// default).
	ProgressInterval time.Duration
	// Progress is where running drivers' Spark progress comes from; nil:
	// Spark's REST API on each driver's UI (sparkapi), refreshed every
	// ProgressInterval, when that is not 0. Tests set a stand-in.
	Progress ProgressSource
	// SubmitWait is how long a pass waits for a spark-submit run before
	// reporting Pending; the run goes on and a later pass takes its
	// result.
	SubmitWait time.Duration
	// Policy is what a run's objects may be (package policy); a step it
	// refuses fails as an invalid body does.
	Policy policy.Policy
	// ReleaseEnded stops following a workflow once it has finished or is
	// being deleted and its drivers were swept (Release): a process that
	// follows a namespace's workflows for their whole life (the
	// controller) holds only the running ones. A sidecar, which serves one
	// workflow and ends with it, leaves it off.
	ReleaseEnded bool
	// SharedLog says this process's log holds the workflows of every
	// namespace it serves, whoever wrote them (the controller): the
	// spark-submit command line is logged with its conf keys and without
	// any value a workflow author gave (redact.ArgsKeys), so that a secret
	// the redaction rules cannot tell by its name never reaches whoever
	// reads that log. A sidecar's log is in its workflow's namespace, read
	// by those who may read the workflow: it shows the values, redacted.
	SharedLog bool
	// KueueQueue is the Kueue LocalQueue of the steps whose template
	// names none (kueue.x-k8s.io/queue-name); "": such steps are not
	// queued.
	KueueQueue string
	// Now is the clock.
	Now func() time.Time
}

// MaxSubmitWait is the longest SubmitWait: a pass that waits holds one
// of the Workers.
const MaxSubmitWait = 20 * time.Second

// DefaultProgressInterval is ProgressInterval's default. Each written
// change of a node's result is a WorkflowTaskSet write and a Workflow
// update by the controller: 30 s keeps a running node's duration in the
// UI within about a minute of the truth, and costs at most 2 Workflow
// updates a minute per running node; the writer batches a workflow's
// nodes into at most one write per WriteGap.
const DefaultProgressInterval = 30 * time.Second

// MinProgressInterval is the shortest ProgressInterval but 0: the message
// shows whole seconds, so a shorter step could not be seen.
const MinProgressInterval = time.Second

// DefaultOptions are the core's defaults, defined here once: Validate
// fills a zero setting from them, and sparkplug serve's flags start from
// them.
func DefaultOptions() Options {
	return Options{
		NotFoundGrace:    30 * time.Second,
		Workers:          16,
		Resync:           2 * time.Second,
		WriteGap:         time.Second,
		HoldVanished:     10 * time.Second,
		InterimHold:      nodestatus.DefaultInterimHold,
		AccessWait:       5 * time.Second,
		SubmitWait:       10 * time.Second,
		ProgressInterval: DefaultProgressInterval,
		MaxSubmits:       4,
		Launcher:         spec.LauncherNative,
		Submit:           submit.Options{Timeout: submit.DefaultTimeout, RequestTimeout: submit.DefaultRequestTimeout},
		Archive:          archive.Settings{MaxBytes: archive.DefaultMaxBytes, Timeout: archive.DefaultTimeout, Concurrency: archive.DefaultConcurrency},
		Policy:           policy.Default(),
	}
}

// Validate fills the settings left zero from DefaultOptions and rejects
// nonsense, naming the setting (package setting).
func (o *Options) Validate() error {
	d := DefaultOptions()
	def := func(v *time.Duration, dv time.Duration) {
		if *v == 0 {
			*v = dv
		}
	}
	def(&o.NotFoundGrace, d.NotFoundGrace)
	def(&o.Resync, d.Resync)
	def(&o.WriteGap, d.WriteGap)
	def(&o.HoldVanished, d.HoldVanished)
	def(&o.AccessWait, d.AccessWait)
	if o.Workers == 0 {
		o.Workers = d.Workers
	}
	def(&o.SubmitWait, d.SubmitWait)
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxSubmits == 0 {
		o.MaxSubmits = d.MaxSubmits
	}
	if o.Archive.MaxBytes == 0 {
		o.Archive.MaxBytes = d.Archive.MaxBytes
	}
	def(&o.Archive.Timeout, d.Archive.Timeout)
	if o.Archive.Concurrency == 0 {
		o.Archive.Concurrency = d.Archive.Concurrency
	}
	if o.Archive.MaxBytes < archive.MinMaxBytes {
		return setting.Errorf("archive-logs-max-bytes", "must be at least %d, got %d", archive.MinMaxBytes, o.Archive.MaxBytes)
	}
	if o.Archive.Timeout < 0 {
		return setting.Errorf("archive-logs-timeout", "must not be negative, got %s", o.Archive.Timeout)
	}
	if o.Workers < 0 {
		return setting.Errorf("workers", "must be at least 1, got %d", o.Workers)
	}
	if o.MaxSubmits < 0 {
		return setting.Errorf("max-spark-submits", "must be at least 1, got %d", o.MaxSubmits)
	}
	for _, s := range []struct {
		name string
		d    time.Duration
	}{
		{"not-found-grace", o.NotFoundGrace}, {"resync", o.Resync}, {"write-gap", o.WriteGap},
	} {
		if s.d < 0 {
			return setting.Errorf(s.name, "must not be negative, got %s", s.d)
		}
	}
	if o.InterimHold < 0 {
		return setting.Errorf("interim-hold", "must not be negative, got %s (0 writes every state at once)", o.InterimHold)
	}
	if o.ProgressInterval < 0 || (o.ProgressInterval > 0 && o.ProgressInterval < MinProgressInterval) {
		return setting.Errorf("progress-interval", "%s: want 0 (off) or at least %s, as the message shows whole seconds", o.ProgressInterval, MinProgressInterval)
	}
	if o.SubmitWait < 0 || o.SubmitWait > MaxSubmitWait {
		return setting.Errorf("submit-wait", "%s: want between 0 and %s, as a pass that waits holds a worker", o.SubmitWait, MaxSubmitWait)
	}
	switch o.Launcher {
	case "":
		o.Launcher = spec.LauncherNative
	case spec.LauncherNative:
	case spec.LauncherSparkSubmit:
		if o.Submit.SparkHome == "" {
			return setting.Errorf("launcher", "spark-submit needs spark-home: the Spark distribution whose bin/spark-submit launches the drivers")
		}
	default:
		return setting.Errorf("launcher", "must be %s or %s, got %q", spec.LauncherNative, spec.LauncherSparkSubmit, o.Launcher)
	}
	if err := o.defaults().Validate(); err != nil {
		return err
	}
	if err := o.Policy.Validate(); err != nil {
		return err
	}
	return o.Submit.Validate()
}

// defaults are what the options give every body that does not say.
func (o *Options) defaults() spec.PluginDefaults {
	return spec.PluginDefaults{Launcher: o.Launcher, IngressURLFormat: o.IngressURLFormat, IngressClassName: o.IngressClassName,
		HistoryServerURL: o.HistoryServerURL, ArchiveLogs: o.ArchiveLogs}
}
