package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/sparkplug-io/sparkplug/e2e/stages"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// kwokLogs is KWOK's Logs resource: which file serves a pod's container
// log through the kubelet API (pods/log).
var kwokLogs = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "logs"}

// RunLogs writes, for every driver pod, the log a Spark driver would
// print (in the CRI log format KWOK reads) into a file under dir, and a
// KWOK Logs object naming that file, so `kubectl logs`, the API server's
// pods/log and everything built on them read it. The file grows as the
// driver moves: started, running, ended with its exit code and message
// (written with its start where the driver-exit Stage will end it:
// plannedEnd).
// Drivers skip names (those a real kubelet runs, which keeps their real
// log) get none.
func RunLogs(ctx context.Context, client kubernetes.Interface, dyn dynamic.Interface, dir string, skip func(*corev1.Pod) bool, log *slog.Logger) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create driver log dir: %w", err)
	}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = labels.Set{spark.LabelRole: spark.RoleDriver}.String()
		}))
	informer := factory.Core().V1().Pods().Informer()
	sync := func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok || p.DeletionTimestamp != nil || (skip != nil && skip(p)) {
			return
		}
		if err := writeDriverLog(ctx, dyn, dir, p); err != nil && ctx.Err() == nil {
			log.Warn("driver log simulation failed", "driver", p.Name, "error", err.Error())
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    sync,
		UpdateFunc: func(_, obj any) { sync(obj) },
	}); err != nil {
		return fmt.Errorf("watch driver pods: %w", err)
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return errors.New("driver pod cache did not sync")
	}
	return nil
}

// LogFile is where RunLogs writes a driver's log.
func LogFile(dir string, p *corev1.Pod) string {
	return filepath.Join(dir, p.Namespace+"_"+p.Name+".log")
}

func writeDriverLog(ctx context.Context, dyn dynamic.Interface, dir string, p *corev1.Pod) error {
	path := LogFile(dir, p)
	// Written whole and renamed: KWOK never reads half a file.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(DriverLog(p)), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1",
		"kind":       "Logs",
		"metadata": map[string]any{
			"name": p.Name, "namespace": p.Namespace,
			// Gone with its pod.
			"ownerReferences": []any{map[string]any{"apiVersion": "v1", "kind": "Pod", "name": p.Name, "uid": string(p.UID)}},
		},
		"spec": map[string]any{"logs": []any{map[string]any{
			"containers": []any{spark.DriverContainerName},
			"logsFile":   path,
		}}},
	}}
	_, err := dyn.Resource(kwokLogs).Namespace(p.Namespace).Create(ctx, obj, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create KWOK Logs %s: %w", p.Name, err)
	}
	return nil
}

// DriverLog is the simulated driver's log so far, in the CRI log format
// (one "<RFC 3339> stdout F <line>" per line): Spark's first lines once
// the driver started, its last ones once it ended.
func DriverLog(p *corev1.Pod) string {
	var b strings.Builder
	line := func(t time.Time, format string, args ...any) {
		fmt.Fprintf(&b, "%s stdout F %s\n", t.UTC().Format(time.RFC3339Nano), fmt.Sprintf(format, args...))
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name != spark.DriverContainerName {
			continue
		}
		var started, ended time.Time
		var term *corev1.ContainerStateTerminated
		switch {
		case cs.State.Running != nil:
			started = cs.State.Running.StartedAt.Time
			term, ended = plannedEnd(p, started)
		case cs.State.Terminated != nil:
			term = cs.State.Terminated
			started, ended = term.StartedAt.Time, term.FinishedAt.Time
		default:
			return ""
		}
		line(started, "INFO SparkContext: Running Spark version 3.5.5 (simulated by the sparkplug e2e suite)")
		line(started, "INFO SparkContext: Submitted application: %s", p.Labels[spark.LabelAppName])
		line(started, "INFO Utils: Successfully started service 'SparkUI' on port 4040.")
		line(started, "INFO KubernetesClusterSchedulerBackend: application id %s, driver pod %s/%s", p.Labels[spark.LabelAppSelector], p.Namespace, p.Name)
		if term == nil {
			return b.String()
		}
		if term.ExitCode == 0 {
			line(ended, "INFO SparkContext: Successfully stopped SparkContext")
		} else {
			msg := p.Annotations[stages.AnnotationMessage]
			if msg == "" {
				msg = "the job failed"
			}
			line(ended, "ERROR SparkContext: %s", msg)
			line(ended, "INFO ShutdownHookManager: exiting with code %d", term.ExitCode)
		}
	}
	return b.String()
}

// plannedEnd is how a running driver will end, as the driver-exit Stage
// will end it (its exit code, at its start plus run-seconds), for a
// driver whose annotations say so; nil for one that runs until deleted or
// is evicted. A kubelet has a container's whole log before it reports the
// container terminated, but this simulation writes the log from its own
// watch of the pod, which sees KWOK's termination at the same moment as
// sparkplug does: a driver's last lines are written when it starts, or a
// log read just after it ended (an archive) could miss them.
func plannedEnd(p *corev1.Pod, started time.Time) (*corev1.ContainerStateTerminated, time.Time) {
	code, ok := p.Annotations[stages.AnnotationExitCode]
	if _, evict := p.Annotations[stages.AnnotationEvict]; !ok || evict {
		return nil, time.Time{}
	}
	n, err := strconv.Atoi(code)
	if err != nil {
		return nil, time.Time{}
	}
	secs, _ := strconv.ParseFloat(p.Annotations[stages.AnnotationRunSeconds], 64)
	return &corev1.ContainerStateTerminated{ExitCode: int32(n)}, started.Add(time.Duration(secs * float64(time.Second)))
}
