package spec

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func validateSparkplug(p *field.Path, s *SparkApplicationSpec) field.ErrorList {
	o := s.Sparkplug
	if o == nil {
		return nil
	}
	var errs field.ErrorList
	if o.PendingTimeout != nil {
		d, err := time.ParseDuration(*o.PendingTimeout)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(p.Child("pendingTimeout"), *o.PendingTimeout, "must be a duration such as 90s or 10m"))
		case d <= 0:
			errs = append(errs, field.Invalid(p.Child("pendingTimeout"), *o.PendingTimeout, "must be positive; remove it for the default of "+DefaultPendingTimeout.String()))
		}
	}
	if o.Launcher != nil {
		switch *o.Launcher {
		case LauncherNative:
		case LauncherSparkSubmit:
			errs = append(errs, validateSparkSubmitLauncher(p.Child("launcher"), s)...)
		default:
			errs = append(errs, field.NotSupported(p.Child("launcher"), *o.Launcher, []string{LauncherNative, LauncherSparkSubmit}))
		}
	}
	if o.Kueue != nil && o.Kueue.OnPreemption != nil {
		switch *o.Kueue.OnPreemption {
		case OnPreemptionRequeue, OnPreemptionFail:
		default:
			errs = append(errs, field.NotSupported(p.Child("kueue", "onPreemption"), *o.Kueue.OnPreemption, []string{OnPreemptionRequeue, OnPreemptionFail}))
		}
	}
	errs = append(errs, validateUIIngressOptions(p.Child("uiIngress"), o.UIIngress)...)
	errs = append(errs, validateHistoryServerURL(p.Child("historyServerURL"), o.HistoryServerURL)...)
	return errs
}

// validateSparkSubmitLauncher checks what the spark-submit launcher asks
// of a body: cluster mode (in client mode the driver pod runs spark-submit
// itself), and, as spark-submit picks PythonRunner or RRunner by the
// primary resource's extension, a Python or R file that has it.
func validateSparkSubmitLauncher(p *field.Path, s *SparkApplicationSpec) field.ErrorList {
	if s.Mode != "" && s.Mode != ModeCluster {
		return field.ErrorList{field.Invalid(p, LauncherSparkSubmit, "the spark-submit launcher submits in cluster mode; in client mode the driver pod runs spark-submit itself: remove sparkplug.launcher, or use mode cluster")}
	}
	var want []string
	switch s.Type {
	case TypePython:
		want = []string{".py"}
	case TypeR:
		want = []string{".R", ".r"}
	}
	if file := strings.TrimSpace(ptrOr(s.MainApplicationFile)); len(want) > 0 && file != "" && !hasAnySuffix(file, want) {
		return field.ErrorList{field.Invalid(rootPath.Child("mainApplicationFile"), file,
			fmt.Sprintf("with the spark-submit launcher, a %s application's file must end in %s: spark-submit picks the %s runner by the extension", s.Type, strings.Join(want, " or "), s.Type))}
	}
	return nil
}

// Launcher is the body's sparkplug.launcher, or "" when it names none
// (the plugin's default applies).
func (s *SparkApplicationSpec) Launcher() string {
	if s.Sparkplug == nil || s.Sparkplug.Launcher == nil {
		return ""
	}
	return *s.Sparkplug.Launcher
}

// LauncherFor is what creates the body's driver on a plugin whose default
// launcher (serve --launcher) is pluginDefault: the body's own
// sparkplug.launcher; else native in client mode, whose driver pod runs
// spark-submit itself, so there is nothing for a submitting spark-submit
// to do (validation refuses a client-mode body that asks for one); else
// pluginDefault, native when empty.
func (s *SparkApplicationSpec) LauncherFor(pluginDefault string) string {
	switch {
	case s.Launcher() != "":
		return s.Launcher()
	case s.Mode == ModeClient, pluginDefault == "":
		return LauncherNative
	default:
		return pluginDefault
	}
}

// DefaultPendingTimeout is how long a driver may wait to start when the
// body sets no sparkplug.pendingTimeout: long enough for a large image
// pull or a node autoscaler, short enough that a stuck step is seen the
// same hour.
const DefaultPendingTimeout = 10 * time.Minute

// PendingTimeout is the body's pending timeout, or the default.
func (s *SparkApplicationSpec) PendingTimeout() time.Duration {
	if s.Sparkplug != nil && s.Sparkplug.PendingTimeout != nil {
		if d, err := time.ParseDuration(*s.Sparkplug.PendingTimeout); err == nil && d > 0 {
			return d
		}
	}
	return DefaultPendingTimeout
}

// What a step queued with Kueue does when Kueue preempts it
// (sparkplug.kueue.onPreemption).
const (
	// OnPreemptionRequeue stops the driver and queues a new attempt,
	// which runs once Kueue admits it again (the default).
	OnPreemptionRequeue = "Requeue"
	// OnPreemptionFail stops the driver and fails the node.
	OnPreemptionFail = "Fail"
)

// RequeuesOnPreemption: a preempted attempt of the step is followed by
// another (sparkplug.kueue.onPreemption Requeue, the default).
func (s *SparkApplicationSpec) RequeuesOnPreemption() bool {
	o := s.Sparkplug
	return o == nil || o.Kueue == nil || o.Kueue.OnPreemption == nil || *o.Kueue.OnPreemption != OnPreemptionFail
}
