package execute

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkplug-io/sparkplug/plugin/decide"
	"github.com/sparkplug-io/sparkplug/plugin/driverpod"
	"github.com/sparkplug-io/sparkplug/plugin/identity"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/redact"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/submit"
)

// The spark-submit launcher (sparkplug.launcher: spark-submit, or serve
// --launcher spark-submit) replaces only the creation of the driver pod:
// spark-submit creates it, with its ConfigMap and Service, under the name
// the native launcher would use, and from then on the run is followed as
// any other. sparkplug still creates its own companions (its ConfigMap,
// which keeps the metrics files and becomes the tombstone of a stopped
// driver, and its Services, which the outputs name), retargeted at the
// application id spark-submit chose (retarget), and makes the Workflow the
// driver's owner when Spark did not (ensureOwner).
//
// spark-submit is a JVM: seconds per run, minutes on a slow API server or
// while it resolves packages. So a run goes on in the background, keyed by
// workflow, node and attempt, in memory: a pass waits for it up to
// SubmitWait, then reports Pending "SUBMITTED: spark-submit running", and
// the node is due a pass again when the run ends, whose pass takes its
// result. A restarted plugin forgets the run (its spark-submit
// died with it) and finds the driver if it was created; if not, it runs
// spark-submit again, which is safe because the name is the same.

// sparkSubmit creates objs.Driver by running spark-submit, or finds it
// created already: in the cache before a run, by a GET after a run that
// failed (spark-submit refuses a driver that exists: a repeated call, a
// restarted plugin). A failure is counted as the native launcher counts a
// rejected create.
//
// A pod of the driver's name is taken only if it is this run's
// (notOurDriver: the native launcher's rule, and this run's labels), or if
// this run's own spark-submit created it: one that exited 0, as
// spark-submit refuses a pod that exists; such a pod, which may lack the
// Workflow as owner, gets it (ensureOwner) before it is taken. Any other
// pod of the name (a squatter's, another Workflow's) fails the attempt,
// named, and is left as it is.
func (r *pass) sparkSubmit(objs *objects.Set, br objects.Run, o launchOrder) (*corev1.Pod, *decide.Befell) {
	name := objs.Driver.Name
	key := failKey(r.wf.UID, o.node, o.attempt)
	if p := r.cachedPod(name); p != nil {
		why := r.notOurDriver(p, objs.Driver)
		if why == "" {
			r.log.Info("driver pod already existed; continuing with it", "node", o.node, "driver", name)
			return p, nil
		}
		if !r.core.submits.has(key) {
			// No spark-submit of this run made it.
			r.withdrawPodGroup(objs.PodGroup)
			return nil, r.squatted(o.attempt, why)
		}
		// This run's spark-submit may have made it: its result decides.
	}
	so := &r.core.opts.Submit
	if so.SparkHome == "" {
		r.withdrawPodGroup(objs.PodGroup)
		return nil, unlaunchable("sparkplug.launcher is spark-submit, but this plugin has no Spark distribution to run it from (sparkplug serve --spark-home)")
	}
	in := so.Input(r.step.Body, objects.Properties(r.step.Body, br), objs.Driver)
	executorTemplate := objs.ConfigMap.Data[spark.ExecutorPodTemplateKey]
	owner := objects.WorkflowOwner(br.Workflow)
	log := r.log.With("node", o.node, "driver", name)
	uid, node := r.wf.UID, r.node
	run, running := r.core.submits.start(key, r.now, func() submitOutcome {
		out := r.core.runSubmit(context.WithoutCancel(r.ctx), log, in, executorTemplate, owner)
		// Its node takes the result on its next pass.
		defer r.core.work.AddAfter(flowKey(uid, node), afterDone)
		return out
	})
	if run == nil {
		// As many spark-submits run as the plugin allows: wait for a slot.
		// Nothing was created; the PodGroup, if any, waits with the node.
		return nil, &decide.Befell{Kind: decide.NoSlot, Attempt: o.attempt, Running: running}
	}

	wait := time.NewTimer(r.core.opts.SubmitWait)
	defer wait.Stop()
	select {
	case <-run.done:
	case <-wait.C:
		return nil, &decide.Befell{Kind: decide.Submitting, Attempt: o.attempt}
	case <-r.ctx.Done():
		return nil, r.transient("wait for spark-submit: %s", r.ctx.Err())
	}

	// The run is kept until its result is taken: a pass that cannot read
	// or adopt the pod now takes the same result again.
	out := run.out
	pod := out.pod
	if pod == nil {
		p, err := r.core.clients.Kube.CoreV1().Pods(r.wf.Namespace).Get(r.ctx, name, metav1.GetOptions{})
		switch {
		case err == nil:
			pod = p
		case !apierrors.IsNotFound(err):
			return nil, r.transient("get driver pod %s after spark-submit: %s", name, err)
		}
	}
	switch {
	case pod != nil && out.result.OK():
		if err := driverpod.NotTheRunsLabels(pod, objs.Driver.Name, objs.Driver.Labels); err != nil {
			r.core.submits.forget(key, run)
			r.withdrawPodGroup(objs.PodGroup)
			return nil, r.squatted(o.attempt, fmt.Sprintf("pod %s: %s", pod.Name, err))
		}
		owned, err := ownedBy(r.ctx, r.core.clients.Kube, pod, objects.WorkflowOwner(r.wf))
		if err != nil {
			return nil, r.transient("%s", err)
		}
		r.core.submits.forget(key, run)
		log.Info("driver pod created by spark-submit", "took", out.result.Took.Round(time.Millisecond))
		r.core.metrics.Driver("launched", "")
		return owned, nil
	case pod != nil:
		r.core.submits.forget(key, run)
		if why := r.notOurDriver(pod, objs.Driver); why != "" {
			r.withdrawPodGroup(objs.PodGroup)
			return nil, r.squatted(o.attempt, why)
		}
		log.Info("driver pod already existed; continuing with it", "spark_submit", submit.Message(out.result, so.Timeout))
		return pod, nil
	case out.result.OK():
		r.core.submits.forget(key, run)
		r.withdrawPodGroup(objs.PodGroup)
		return nil, r.rejected(o.attempt, fmt.Sprintf("spark-submit exited 0, but driver pod %s does not exist: is spark.kubernetes.namespace or spark.kubernetes.driver.pod.name overridden in the Spark distribution's spark-defaults.conf?", name))
	default:
		r.core.submits.forget(key, run)
		r.withdrawPodGroup(objs.PodGroup)
		return nil, r.rejected(o.attempt, submit.Message(out.result, so.Timeout))
	}
}

// notOurDriver says why pod p, found under the name of the run's driver
// (built, as the native launcher builds it), is not this run's driver, ""
// when it is: the native launcher's rule (driverpod.NotOurs: the run's
// labels, this Workflow its owner).
func (r *pass) notOurDriver(p, built *corev1.Pod) string {
	if err := driverpod.NotOurs(p, built.Name, built.Labels, objects.WorkflowOwner(r.wf)); err != nil {
		return fmt.Sprintf("pod %s: %s", p.Name, err)
	}
	return ""
}

// squatted records that another pod has the name of the attempt's
// driver, naming it and why it is not this run's; the pod is left as it
// is. spark-submit launches under the run's names only, so decide counts
// a refused submission (Policy.SparkSubmit).
func (r *pass) squatted(attempt int, why string) *decide.Befell {
	r.log.Warn("a pod has the driver's name and is not this run's", "node", r.node, "why", why)
	return &decide.Befell{Kind: decide.NamesTaken, Attempt: attempt,
		Message: fmt.Sprintf("%s, so it is not this run's driver: delete it, or run the workflow under another name", why)}
}

// runSubmit runs spark-submit once, outside any pass: it writes the pod
// templates and runs spark-submit, both as submit.Options.Command says
// (what sparkplug render shows), and gives the driver pod, when this
// spark-submit created it (it exited 0) and it carries this run's
// identity, the Workflow as owner, so that even a driver no pass comes back
// to again (a stopped workflow) goes with the Workflow.
func (c *Core) runSubmit(ctx context.Context, log *slog.Logger, in submit.Input, executorTemplate string, owner metav1.OwnerReference) submitOutcome {
	o := &c.opts.Submit
	fail := func(err error) submitOutcome {
		log.Error("spark-submit not run", "error", err.Error())
		return submitOutcome{result: submit.Result{ExitCode: -1, Err: err}}
	}
	dir, err := os.MkdirTemp(o.TempDir, "sparkplug-submit-")
	if err != nil {
		return fail(fmt.Errorf("make a directory for spark-submit's files: %w", err))
	}
	defer os.RemoveAll(dir)
	cmd, err := o.Command(in, dir, executorTemplate)
	if err != nil {
		return fail(err)
	}
	if err := cmd.WriteFiles(); err != nil {
		return fail(err)
	}
	argv := redact.Args(cmd.Args)
	if c.opts.SharedLog {
		argv = redact.ArgsKeys(cmd.Args, len(in.Spec.Arguments))
	}
	log.Info("running spark-submit", "program", cmd.Program, "argv", argv)
	res := submit.Run(ctx, cmd.Program, cmd.Args, cmd.Env, o.Timeout)
	log.Info("spark-submit ended", "exit_code", res.ExitCode, "timed_out", res.TimedOut,
		"took", res.Took.Round(time.Millisecond), "message", submit.Message(res, o.Timeout))
	log.Debug("spark-submit output", "stdout", res.Stdout, "stderr", res.Stderr)

	out := submitOutcome{result: res}
	getCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	pod, err := c.clients.Kube.CoreV1().Pods(in.Driver.Namespace).Get(getCtx, in.Driver.Name, metav1.GetOptions{})
	if err != nil {
		if !apierrors.IsNotFound(err) {
			log.Info("driver pod not read after spark-submit; the next pass reads it", "error", err.Error())
		}
		return out
	}
	if !res.OK() || driverpod.NotTheRunsLabels(pod, in.Driver.Name, in.Driver.Labels) != nil {
		// Not made by this spark-submit, or not this run's: the pass
		// decides, and nothing is added to someone else's pod.
		out.pod = pod
		return out
	}
	if owned, err := ownedBy(getCtx, c.clients.Kube, pod, owner); err != nil {
		log.Info("driver pod not owned by the workflow yet; the next pass retries", "error", err.Error())
		out.pod = pod
	} else {
		out.pod = owned
	}
	return out
}

// cachedPod is the workflow's cached pod of that name, or nil.
func (r *pass) cachedPod(name string) *corev1.Pod {
	return r.scope.Pod(name)
}

// ensureOwner makes the Workflow the driver's owner when it is not. Every
// launcher hands over a driver that has it (sparkSubmit gives it to the
// pod its own spark-submit created, and takes no other without it), so
// this costs no API request; it stays as the guard of companions, whose
// objects the Workflow's garbage collection must reach.
func (r *pass) ensureOwner(driver *corev1.Pod) error {
	owner := objects.WorkflowOwner(r.wf)
	if identity.OwnedByWorkflow(driver.OwnerReferences, string(owner.UID)) {
		return nil
	}
	owned, err := ownedBy(r.ctx, r.core.clients.Kube, driver, owner)
	if err != nil {
		return err
	}
	r.scope.Wrote(owned)
	r.log.Info("driver pod now owned by the workflow", "driver", driver.Name)
	return nil
}

// ownedBy adds owner to the pod's owners (a strategic merge by uid, on
// this very pod: the patch names its uid) unless it is there already.
func ownedBy(ctx context.Context, kube kubernetes.Interface, pod *corev1.Pod, owner metav1.OwnerReference) (*corev1.Pod, error) {
	if identity.OwnedByWorkflow(pod.OwnerReferences, string(owner.UID)) {
		return pod, nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid":             pod.UID,
		"ownerReferences": []metav1.OwnerReference{owner},
	}})
	if err != nil {
		return nil, fmt.Errorf("encode owner patch: %w", err)
	}
	owned, err := kube.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return nil, fmt.Errorf("make workflow %s the owner of driver pod %s: %w", owner.Name, pod.Name, err)
	}
	return owned, nil
}

// retarget points the companions at the application id the driver
// carries. The builder uses the run's own id, which the native launcher
// gives the driver; spark-submit makes up its own, and the Services must
// select the pod that exists. For a native driver it changes nothing.
func retarget(objs *objects.Set, driver *corev1.Pod) {
	appID := driver.Labels[spark.LabelAppSelector]
	if appID == "" {
		return
	}
	others := objs.Companions()
	if objs.PodGroup != nil {
		others = append(others, objs.PodGroup)
	}
	for _, o := range others {
		if l := o.GetLabels(); l[spark.LabelAppSelector] != "" {
			l[spark.LabelAppSelector] = appID
			o.SetLabels(l)
		}
		if svc, ok := o.(*corev1.Service); ok && svc.Spec.Selector[spark.LabelAppSelector] != "" {
			svc.Spec.Selector[spark.LabelAppSelector] = appID
		}
	}
}

// submitRuns are the spark-submit runs in flight, by workflow uid, node
// and attempt: a pass starts one, or finds the one a pass before it
// started. A finished run no pass took (its driver showed in the cache
// first, or its workflow ended) is dropped submitRunKeep after it ended.
// At most max run at once (0: no limit).
type submitRuns struct {
	mu sync.Mutex
	m  map[string]*submitRun
	// now is the clock of the runs' end times.
	now func() time.Time
	max int
}

type submitRun struct {
	// done is closed when out and ended are set.
	done  chan struct{}
	out   submitOutcome
	ended time.Time
}

// submitRunKeep is how long a finished run waits for a pass to take it.
const submitRunKeep = 10 * time.Minute

// submitOutcome is how a spark-submit run ended, and the driver pod if it
// existed then.
type submitOutcome struct {
	result submit.Result
	pod    *corev1.Pod
}

// start returns the run for key, starting f in the background if there is
// none; nil when max runs are running already, and how many run.
func (s *submitRuns) start(key string, now time.Time, f func() submitOutcome) (*submitRun, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	running := 0
	for k, run := range s.m {
		select {
		case <-run.done:
			if now.Sub(run.ended) > submitRunKeep {
				delete(s.m, k)
			}
		default:
			running++
		}
	}
	if run, ok := s.m[key]; ok {
		return run, running
	}
	if s.max > 0 && running >= s.max {
		return nil, running
	}
	if s.m == nil {
		s.m = map[string]*submitRun{}
	}
	clock := s.now
	if clock == nil {
		clock = time.Now
	}
	run := &submitRun{done: make(chan struct{})}
	s.m[key] = run
	go func() {
		defer close(run.done)
		run.out = f()
		run.ended = clock()
	}()
	return run, running + 1
}

// has says whether a run is kept for key: in flight, or ended with its
// result not taken yet.
func (s *submitRuns) has(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.m[key]
	return ok
}

// len is how many runs are kept.
func (s *submitRuns) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// forget drops a finished run whose result was taken.
func (s *submitRuns) forget(key string, run *submitRun) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m[key] == run {
		delete(s.m, key)
	}
}
