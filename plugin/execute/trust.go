package execute

// Which of the objects that look like a node's run are its run. The name,
// labels and Workflow owner (driverpod.OwnDriver) are the first rule, and
// anyone who may create pods in the namespace can meet it: the names are
// a hash of what the Workflow shows, its uid is on every driver. So an
// object that meets it still counts only if this process launched it, or
// sparkplug could have made it:
//
//   - the driver the node's entry records (its uid, output driver-uid)
//     is the only one of its attempt: a pod put in its place under its
//     name is not it;
//   - a driver no entry records yet was made after its node started,
//     and after the previous attempt's driver ended: sparkplug launches
//     an attempt only then, so one made before was made by someone else;
//   - no attempt's driver counts while an earlier attempt's still runs:
//     sparkplug launches the next attempt only after one ended;
//   - a run of a sparkplug version before incarnations (no
//     sparkplug.io/incarnation), which counts for any incarnation, is held
//     to the same times: one made before its node started (before an argo
//     retry, or by someone else) is not the node's;
//   - a tombstone counts only if this process made it, or it names
//     (sparkplug.io/driver-uid) the uid of the counted driver of its
//     attempt, or the recorded one.
//
// The TaskSet's status, where the record is, can be written only by whom
// Argo lets (the agent's and sparkplug's accounts). An object that fails
// these rules is left as it is, never adopted, stopped or deleted, and is
// named once, in a log line and a Warning Event on the Workflow. The
// window the rules leave (a pod made between a node's start and its
// driver's create, or replaced between the create and its record) is
// closed by the admission policy, which refuses objects carrying a run's
// labels to every account but sparkplug's (docs/operations.md, Hardening).

import (
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkplug-io/sparkplug/plugin/driverpod"
	"github.com/sparkplug-io/sparkplug/plugin/nodestatus"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// clockSkew is how much earlier than its node's start, or its previous
// attempt's end, a driver may be created and still count: the times come
// from Argo's controller and the API server, each to the second, and
// their clocks may differ a little.
const clockSkew = 2 * time.Second

// entryRecord is what a node's entry says of its newest driver.
type entryRecord struct {
	driver  string
	attempt int
	uid     types.UID
}

// recordOf reads the record of a node's entry (nil: none).
func recordOf(entry *wfv1.NodeResult) entryRecord {
	driver, attempt := recordedDriver(entry)
	return entryRecord{driver: driver, attempt: attempt, uid: types.UID(nodestatus.Param(entry, spark.OutputDriverUID))}
}

// forgery says why driver pod p, which meets the name, label and owner
// rule, is not the node's run anyway ("": it is). nodeStart is when Argo
// started the node (zero: unknown).
func forgery(p *corev1.Pod, rec entryRecord, nodeStart time.Time, launched func(types.UID) bool) string {
	if launched(p.UID) {
		return ""
	}
	a := attemptOf(p)
	if rec.uid != "" && a == rec.attempt {
		if p.UID != rec.uid {
			return fmt.Sprintf("the node's entry records attempt %d's driver as uid %s", a, rec.uid)
		}
		return ""
	}
	// (An API server always sets creationTimestamp; zero is a test's
	// object.)
	if !nodeStart.IsZero() && !p.CreationTimestamp.IsZero() && p.CreationTimestamp.Add(clockSkew).Before(nodeStart) {
		return fmt.Sprintf("it was made at %s, before its node started (%s)", p.CreationTimestamp.UTC().Format(time.RFC3339), nodeStart.UTC().Format(time.RFC3339))
	}
	return ""
}

// dropped is a driver that does not count, and why.
type dropped struct {
	pod *corev1.Pod
	why string
}

// forgedInChain splits the drivers of a run, oldest attempt first, into
// those sparkplug could have launched one after another and the others,
// with why each could not have been: a driver of a later attempt while an
// earlier one runs, or made before the earlier one ended. The recorded
// driver always stays.
func forgedInChain(pods []*corev1.Pod, rec entryRecord, launched func(types.UID) bool) ([]*corev1.Pod, []dropped) {
	sort.SliceStable(pods, func(i, j int) bool { return attemptOf(pods[i]) < attemptOf(pods[j]) })
	var why []dropped
	var kept []*corev1.Pod
	var prev *corev1.Pod
	for _, p := range pods {
		recorded := rec.uid != "" && p.UID == rec.uid || launched(p.UID)
		if prev != nil && attemptOf(p) > attemptOf(prev) && !recorded {
			switch {
			case !driverpod.Finished(prev):
				why = append(why, dropped{p, fmt.Sprintf("attempt %d's driver %s still runs", attemptOf(prev), prev.Name)})
				continue
			case !p.CreationTimestamp.IsZero() && p.CreationTimestamp.Add(clockSkew).Before(endedAt(prev, p.CreationTimestamp.Time)):
				why = append(why, dropped{p, fmt.Sprintf("it was made before attempt %d's driver %s ended", attemptOf(prev), prev.Name)})
				continue
			}
		}
		kept = append(kept, p)
		prev = p
	}
	return kept, why
}

// endedAt is when a finished driver's attempt ended, as a launch after it
// saw it: its container's finish, else when its delete was asked
// (deletionTimestamp is that plus the grace period), else now.
func endedAt(p *corev1.Pod, now time.Time) time.Time {
	if p.DeletionTimestamp != nil && p.DeletionGracePeriodSeconds != nil {
		del := p.DeletionTimestamp.Add(-time.Duration(*p.DeletionGracePeriodSeconds) * time.Second)
		if end := driverpod.EndedAt(p, now); end.Before(del) {
			return end
		}
		return del
	}
	return driverpod.EndedAt(p, now)
}

// tombCounts: a tombstone names the driver it stands for by uid, the
// counted driver of its attempt or the one the entry records. (One this
// process made counts anyway: once Argo removed the node's final entry,
// nothing else may be left of the run for a moment.)
func tombCounts(cm *corev1.ConfigMap, drivers []*corev1.Pod, rec entryRecord) bool {
	uid := types.UID(cm.Annotations[spark.AnnotationDriverUID])
	if uid == "" {
		return false
	}
	a := attemptOf(&corev1.Pod{ObjectMeta: cm.ObjectMeta})
	if rec.uid == uid && rec.attempt == a {
		return true
	}
	return slices.ContainsFunc(drivers, func(p *corev1.Pod) bool { return p.UID == uid && attemptOf(p) == a })
}

// nodeStart is when Argo started the node, from the Workflow (zero: not
// shown).
func nodeStart(wf *wfv1.Workflow, node string) time.Time {
	if wf == nil {
		return time.Time{}
	}
	if n, ok := wf.Status.Nodes[node]; ok {
		return n.StartedAt.Time
	}
	return time.Time{}
}

// maxRemembered bounds the uids a process remembers in a boundedUIDs
// (forged objects named, drivers it launched); past it, it forgets them
// all: a forgery may be named again, and a driver it launched is judged
// by the rules alone, as after a restart.
const maxRemembered = 4096

// boundedUIDs is a set of uids of at most maxRemembered, safe for
// concurrent use.
type boundedUIDs struct {
	mu sync.Mutex
	m  map[types.UID]bool
}

// first adds uid and reports whether it was not there yet.
func (f *boundedUIDs) first(uid types.UID) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m[uid] {
		return false
	}
	if f.m == nil || len(f.m) >= maxRemembered {
		f.m = map[types.UID]bool{}
	}
	f.m[uid] = true
	return true
}

// has reports whether uid is there.
func (f *boundedUIDs) has(uid types.UID) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.m[uid]
}

// forged names, once, an object that looks like one of the node's run
// but is not, and why; it is left as it is.
func (r *pass) forged(kind, name string, uid types.UID, why string) {
	if !r.core.forgeries.first(uid) {
		return
	}
	r.log.Warn("object not taken for the node's run: left as it is", "kind", kind, "name", name, "uid", string(uid), "why", why)
	r.core.event(r.wf, corev1.EventTypeWarning, spark.ReasonForgedObject,
		fmt.Sprintf("%s %s looks like node %s's run but is not: %s; sparkplug leaves it as it is", kind, name, r.node, why))
}
