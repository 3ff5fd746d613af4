package objects

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/identity"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// Run is one launch of a Spark application for one Argo node: everything
// besides the spark body that decides names, labels and owner.
type Run struct {
	Workflow spark.WorkflowRef
	// NodeID is Argo's node id, in full (it may be longer than a label).
	NodeID string
	// TemplateKey is the label-safe hash of the Argo template (step.Key).
	TemplateKey string
	// Attempt is the restart-policy attempt, 1 for the first run. Values
	// below 1 are taken as 1.
	Attempt int
	// Incarnation is the Workflow's status.startedAt (RFC 3339) when the
	// run was launched: `argo retry` starts a workflow's failed nodes
	// again under the same ids with a new startedAt, and each
	// incarnation's run has names of its own. Empty for the runs of
	// sparkplug versions before it, whose names it leaves as they were.
	Incarnation string
	// KueueQueue is the Kueue LocalQueue the step waits in ("": none): Build
	// then makes the attempt's Workload (workload.go).
	KueueQueue string
	// ConfKey is the random part of the driver ConfigMap's name
	// (NewConfKey), drawn at each launch, as spark-submit draws its
	// spark-drv-<id>-conf-map: nobody can make that ConfigMap ahead of the
	// driver, which would mount it at once. Empty gives the name of the
	// versions before it, <prefix>-conf, which their drivers mount.
	ConfKey string
	// NameKey is drawn (NewConfKey) when a pod not the run's holds the
	// driver's name: the run's names are then a hash of it too, which
	// nobody can have taken, and its objects carry it
	// (sparkplug.io/name-key) so the names can be told again. Empty: the
	// names are the node's own.
	NameKey string
}

// confKeyBytes is the randomness of a ConfKey: 8 hex characters.
const confKeyBytes = 4

// NewConfKey draws a Run.ConfKey.
func NewConfKey() string {
	b := make([]byte, confKeyBytes)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// ConfigMapOf is the name of the run's ConfigMap that driver mounts (as
// its Spark conf, its metrics files), "" if it mounts none: the name its
// launch drew (Run.ConfKey), which a rebuilt Set cannot know, or a
// previous version's <prefix>-conf. A driver spark-submit made mounts
// spark-submit's own conf, and the run's only for metrics files.
func ConfigMapOf(driver *corev1.Pod) string {
	legacy := RunName(driver.Name) + configMapSuffix
	for _, v := range driver.Spec.Volumes {
		if v.ConfigMap == nil {
			continue
		}
		name := v.ConfigMap.Name
		key, keyed := strings.CutPrefix(name, legacy+"-")
		if name == legacy || keyed && isConfKey(key) {
			return name
		}
	}
	return ""
}

// Names are the names of everything one run creates. They are a pure
// function of the Run, so creating a run twice gives an AlreadyExists,
// never a second driver. Only the ConfigMap's holds a random part
// (Run.ConfKey): the driver names it, and a driver made before is read for
// it (ConfigMapOf).
type Names struct {
	// Prefix is <workflow>-<hash>[-a<attempt>]: the workflow name made a
	// DNS-1035 label and cut to at most 30 characters, 8 hex characters of
	// sha256(uid + "/" + node id [+ "/" + incarnation]), and "-a<N>" for
	// attempts after the first.
	// It is at most 47 characters, the most Spark allows for an executor pod
	// name prefix, so every name below is a valid DNS-1035 label.
	Prefix string
	// DriverPod is <prefix>-driver.
	DriverPod string
	// ConfigMap is <prefix>-conf-<Run.ConfKey>: spark.properties and the
	// executor pod template (<prefix>-conf with no ConfKey).
	ConfigMap string
	// Service is <prefix>-driver-svc, the headless driver Service (at most
	// 58 characters).
	Service string
	// UIService is <prefix>-ui-svc, the Spark UI Service of
	// sparkUIOptions (the Spark operator's <app>-ui-svc).
	UIService string
	// PodGroup is <prefix>-pg, the PodGroup of batchScheduler volcano or
	// kube-scheduler (the Spark operator's spark-<app>-pg and <app>-pg).
	PodGroup string
	// Tombstone is <prefix>-stopped, the ConfigMap that records a driver
	// sparkplug stopped (Tombstone).
	Tombstone string
	// Workload is <prefix>-kueue, the Kueue Workload of a queued step's
	// attempt (workload.go).
	Workload string
	// UIIngress is <prefix>-ui-ingress, the Ingress to the UI Service
	// (the Spark operator's <app>-ui-ingress).
	UIIngress string
	// ExecutorPrefix is spark.kubernetes.executor.podNamePrefix; Spark
	// names executors <prefix>-exec-<N>.
	ExecutorPrefix string
	// AppID is spark-<32 hex characters> of sha256(uid/node id/attempt),
	// the format of Spark's own application ids. It is spark.app.id and the
	// spark-app-selector label of the driver and its executors.
	AppID string
	// AppName is spark.app.name. NamesFor sets it to Prefix; Cluster and
	// Properties use the body's sparkConf["spark.app.name"] when it is set.
	AppName string
}

const (
	driverSuffix    = "-driver"
	serviceSuffix   = "-driver-svc"
	uiServiceSuffix = "-ui-svc"
	uiIngressSuffix = "-ui-ingress"
	configMapSuffix = "-conf"
	tombstoneSuffix = "-stopped"
	podGroupSuffix  = "-pg"
	workloadSuffix  = "-kueue"
	// workflowPartMax is the most characters of the workflow name kept in
	// the prefix.
	workflowPartMax = 30
	// nameHashChars is the length of the node hash in the prefix.
	nameHashChars = 8
	// appIDHashChars is the length of the hash in an application id.
	appIDHashChars = 32
)

// NamesFor returns the names of a run. Attempt 1 has no attempt suffix, so
// a first run's driver reads like spark-submit's <app>-<hash>-driver;
// attempt N > 1 appends -a<N>.
func NamesFor(r Run) Names {
	attempt := attemptOf(r)
	node := r.Workflow.UID + "/" + r.NodeID
	if r.Incarnation != "" {
		node += "/" + r.Incarnation
	}
	if r.NameKey != "" {
		node += "/key/" + r.NameKey
	}
	suffix := "-" + hexSum(node)[:nameHashChars]
	if attempt > 1 {
		suffix += "-a" + strconv.Itoa(attempt)
	}
	prefix := dns1035(r.Workflow.Name, min(workflowPartMax, spark.ExecutorPodNamePrefixMaxChars-len(suffix))) + suffix
	return Names{
		Prefix:         prefix,
		DriverPod:      prefix + driverSuffix,
		ConfigMap:      confMapName(prefix, r.ConfKey),
		Service:        prefix + serviceSuffix,
		UIService:      prefix + uiServiceSuffix,
		Tombstone:      prefix + tombstoneSuffix,
		PodGroup:       prefix + podGroupSuffix,
		Workload:       prefix + workloadSuffix,
		UIIngress:      prefix + uiIngressSuffix,
		ExecutorPrefix: prefix,
		AppID:          "spark-" + hexSum(node + "/" + strconv.Itoa(attempt))[:appIDHashChars],
		AppName:        prefix,
	}
}

// namesFor is NamesFor with the application name the body asks for.
func namesFor(s *spec.SparkApplicationSpec, r Run) Names {
	n := NamesFor(r)
	if name := s.SparkConf[spark.ConfAppName]; name != "" {
		n.AppName = name
	}
	return n
}

// ServiceName is the driver Service's name for a driver pod's name.
func ServiceName(driverPod string) string {
	return strings.TrimSuffix(driverPod, driverSuffix) + serviceSuffix
}

// UIServiceName is the Spark UI Service's name (sparkUIOptions) for a
// driver pod's name.
func UIServiceName(driverPod string) string {
	return strings.TrimSuffix(driverPod, driverSuffix) + uiServiceSuffix
}

// DriverIngressService is the name of the Service of a driverIngressOptions
// entry: <prefix>-driver-<port>, the Spark operator's <app>-driver-<port>.
func (n Names) DriverIngressService(port int32) string {
	return n.Prefix + driverSuffix + "-" + strconv.Itoa(int(port))
}

// DriverIngress is the name of the Ingress of a driverIngressOptions
// entry: <prefix>-ing-<port>, the Spark operator's <app>-ing-<port>.
func (n Names) DriverIngress(port int32) string {
	return n.Prefix + "-ing-" + strconv.Itoa(int(port))
}

// RunName is the run's name (Names.Prefix) for a driver pod's name.
func RunName(driverPod string) string { return strings.TrimSuffix(driverPod, driverSuffix) }

// isConfKey: key is what NewConfKey draws.
func isConfKey(key string) bool {
	b, err := hex.DecodeString(key)
	return err == nil && len(b) == confKeyBytes && key == strings.ToLower(key)
}

// confMapName is the driver ConfigMap's name for a run's prefix and key.
func confMapName(prefix, key string) string {
	if key == "" {
		return prefix + configMapSuffix
	}
	return prefix + configMapSuffix + "-" + key
}

// LegacyConfigMap is the driver ConfigMap's name in the versions before
// Run.ConfKey, <prefix>-conf: a tombstone of theirs may be it.
func (n Names) LegacyConfigMap() string { return n.Prefix + configMapSuffix }

// TombstoneName is the tombstone's name for a driver pod's name.
func TombstoneName(driverPod string) string {
	return strings.TrimSuffix(driverPod, driverSuffix) + tombstoneSuffix
}

// NodeLabel is the value of the sparkplug.io/node label for a node id.
func NodeLabel(nodeID string) string { return identity.NodeHash(nodeID) }

func attemptOf(r Run) int { return max(r.Attempt, 1) }

func hexSum(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// dns1035 turns s into a DNS-1035 label of at most limit characters:
// lower case, runs of other characters made one "-", starting with a letter
// and ending with a letter or digit. It returns "spark" (cut to limit) when
// nothing is left.
func dns1035(s string, limit int) string {
	out := sanitize(s, limit, true)
	if out == "" {
		out = "spark"[:min(len("spark"), max(limit, 1))]
	}
	return out
}

// labelValue turns s into a valid label value the way Spark makes its
// spark-app-name label: lower case, runs of characters other than a-z and
// 0-9 made one "-", at most 63 characters, starting and ending with a letter
// or digit.
func labelValue(s string) string { return sanitize(s, 63, false) }

func sanitize(s string, limit int, letterFirst bool) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(s) {
		letter := c >= 'a' && c <= 'z'
		digit := c >= '0' && c <= '9'
		if !letter && !digit || digit && letterFirst && b.Len() == 0 {
			dash = true
			continue
		}
		if dash && b.Len() > 0 {
			b.WriteByte('-')
		}
		dash = false
		b.WriteRune(c)
	}
	out := b.String()
	if len(out) > limit {
		out = out[:max(limit, 0)]
	}
	return strings.TrimRight(out, "-")
}
