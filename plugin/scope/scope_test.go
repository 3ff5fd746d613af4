package scope

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// The caches keep pods without their managedFields, and of their spec
// the containers' names and the names of the ConfigMaps they mount.
func TestSlimPod(t *testing.T) {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "d", Labels: map[string]string{"spark-role": "driver"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kube-scheduler"}, {Manager: "kubelet"}}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "spark-kubernetes-driver", Image: "spark", Env: []corev1.EnvVar{{Name: "A", Value: "1"}}}, {Name: "sidecar"}},
			Volumes: []corev1.Volume{{Name: "scratch"}, {Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "d-conf-0123abcd"},
				Items:                []corev1.KeyToPath{{Key: "spark.properties", Path: "spark.properties"}}}}}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	got, err := slim(p)
	if err != nil {
		t.Fatal(err)
	}
	gp := got.(*corev1.Pod)
	if len(gp.ManagedFields) != 0 {
		t.Errorf("managedFields kept: %v", gp.ManagedFields)
	}
	if gp.Name != "d" || gp.Labels["spark-role"] != "driver" || gp.Status.Phase != corev1.PodRunning {
		t.Errorf("metadata or status dropped: %+v", gp)
	}
	want := corev1.PodSpec{
		Containers: []corev1.Container{{Name: "spark-kubernetes-driver"}, {Name: "sidecar"}},
		Volumes: []corev1.Volume{{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "d-conf-0123abcd"}}}}},
	}
	if !reflect.DeepEqual(gp.Spec, want) {
		t.Errorf("spec kept %+v, want only the containers' names and the ConfigMaps'", gp.Spec)
	}
	// Not an object (a tombstone of a deleted one): passed on as it is.
	if got, err := slim("x"); err != nil || got != "x" {
		t.Errorf("slim(\"x\") = %v, %v", got, err)
	}
}

// Of a ConfigMap the caches keep its metadata, not its data; of a Workflow
// what sparkplug reads.
func TestSlimConfigMapAndWorkflow(t *testing.T) {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "c", Annotations: map[string]string{"sparkplug.io/stopped": "timeout"}},
		Data:       map[string]string{"spark.properties": "spark.app.name=x"}, BinaryData: map[string][]byte{"b": {1}},
	}
	got, _ := slim(cm)
	if c := got.(*corev1.ConfigMap); c.Data != nil || c.BinaryData != nil || c.Annotations["sparkplug.io/stopped"] != "timeout" {
		t.Errorf("slim ConfigMap = %+v", c)
	}

	repo := &wfv1.ArtifactRepositoryRefStatus{Default: true}
	wf := &wfv1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: "w", UID: "u", Labels: map[string]string{"l": "v"}},
		Spec:       wfv1.WorkflowSpec{Shutdown: wfv1.ShutdownStrategyStop, Entrypoint: "main", Templates: []wfv1.Template{{Name: "main"}}},
		Status: wfv1.WorkflowStatus{
			Phase: wfv1.WorkflowRunning, Message: "m",
			Nodes:                 wfv1.Nodes{"n": {ID: "n", Type: wfv1.NodeTypePlugin, Phase: wfv1.NodeRunning}},
			ArtifactRepositoryRef: repo,
			StoredTemplates:       map[string]wfv1.Template{"x": {Name: "main"}},
			StoredWorkflowSpec:    &wfv1.WorkflowSpec{Entrypoint: "main"},
		},
	}
	got, _ = slim(wf)
	w := got.(*wfv1.Workflow)
	if w.Spec.Shutdown != wfv1.ShutdownStrategyStop || w.Status.Phase != wfv1.WorkflowRunning ||
		w.Status.Nodes["n"].Phase != wfv1.NodeRunning || w.Status.ArtifactRepositoryRef != repo || w.Labels["l"] != "v" || w.UID != "u" {
		t.Errorf("slim dropped what sparkplug reads: %+v", w)
	}
	if len(w.Spec.Templates) != 0 || w.Status.StoredTemplates != nil || w.Status.StoredWorkflowSpec != nil || w.Status.Message != "" {
		t.Errorf("slim kept Argo's templates or its message: %+v", w)
	}
}

// A Workflow Argo compressed (over its 1 MiB limit: nodes gzipped and
// base64-encoded in compressedNodes) is cached with its plugin nodes;
// one whose compressedNodes cannot be read is cached without nodes, and
// says why.
func TestSlimDecompressesNodes(t *testing.T) {
	nodes := wfv1.Nodes{"w-1": {ID: "w-1", Name: "w[0].pi(0:0)", Type: wfv1.NodeTypePlugin, Phase: wfv1.NodeRunning}}
	js, err := json.Marshal(nodes)
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(js)
	_ = zw.Close()
	wf := &wfv1.Workflow{Status: wfv1.WorkflowStatus{CompressedNodes: base64.StdEncoding.EncodeToString(gz.Bytes())}}
	got, err := slim(wf)
	if err != nil {
		t.Fatal(err)
	}
	w := got.(*wfv1.Workflow)
	if n := w.Status.Nodes["w-1"]; n.Name != "w[0].pi(0:0)" || n.Phase != wfv1.NodeRunning || w.Status.CompressedNodes != "" {
		t.Errorf("nodes %+v, compressedNodes %q", w.Status.Nodes, w.Status.CompressedNodes)
	}

	bad := &wfv1.Workflow{Status: wfv1.WorkflowStatus{Phase: wfv1.WorkflowRunning, CompressedNodes: "not base64!"}}
	got, err = slim(bad)
	if w := got.(*wfv1.Workflow); err != nil || len(w.Status.Nodes) != 0 || w.Status.Phase != wfv1.WorkflowRunning ||
		!strings.Contains(Refused(w), "not readable") {
		t.Errorf("slim of undecodable compressedNodes = %+v, %v; want the workflow without nodes, refused", w, err)
	}
}

// SparkTasks lists, sorted, the tasks whose plugin value names spark:
// not another plugin's, not a template without a plugin, not a value
// that is not an object.
func TestSparkTasks(t *testing.T) {
	plugin := func(v string) *wfv1.Plugin {
		p := &wfv1.Plugin{}
		p.Value = []byte(v)
		return p
	}
	ts := &wfv1.WorkflowTaskSet{Spec: wfv1.WorkflowTaskSetSpec{Tasks: map[string]wfv1.Template{
		"n3": {Plugin: plugin(`{"spark":{}}`)}, "n1": {Plugin: plugin(`{"spark":{"type":"Scala"}}`)},
		"n2": {Plugin: plugin(`{"other":{}}`)}, "n4": {Name: "a"}, "n5": {Plugin: plugin(`"spark"`)},
	}}}
	if got := SparkTasks(ts, nil); !slices.Equal(got, []string{"n1", "n3"}) {
		t.Errorf("SparkTasks = %v, want [n1 n3]", got)
	}
	// What is known is asked first, and what was decoded is remembered.
	known := map[string]bool{"n1": false}
	if got := SparkTasks(ts, known); !slices.Equal(got, []string{"n3"}) {
		t.Errorf("SparkTasks with n1 known as no spark task = %v, want [n3]", got)
	}
	if !known["n3"] || len(known) != len(ts.Spec.Tasks) {
		t.Errorf("known after = %v, want every task, n3 a spark task", known)
	}
	if got := SparkTasks(nil, known); got != nil {
		t.Errorf("SparkTasks(nil) = %v", got)
	}
}

// Wrote caches a slimmed copy and leaves the caller's object, which may
// be a cached one, as it is.
func TestWroteKeepsTheCallersObject(t *testing.T) {
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	s := &Scope{Workflow: spark.WorkflowRef{Namespace: "ns", UID: "uid-1"}, runCaches: &runCaches{pods: cache.NewIntegerResourceVersionMutationCache(logr.Discard(), store, store, time.Minute, true)}}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns", ResourceVersion: "1", Labels: map[string]string{spark.LabelWorkflowUID: "uid-1"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "spark"}}},
	}
	s.Wrote(p)
	if len(p.ManagedFields) != 1 || p.Spec.Containers[0].Image != "spark" {
		t.Errorf("Wrote changed the caller's pod: %+v", p)
	}
	got := s.Pod("d")
	if got == nil || got == p || len(got.ManagedFields) != 0 || got.Spec.Containers[0].Image != "" || got.Spec.Containers[0].Name != "c" {
		t.Errorf("cached %+v, want a slimmed copy", got)
	}
}

// In a namespace's shared caches, a scope reads only the objects of its
// own workflow, as if it watched alone: by uid, whatever else shares a
// node hash, an application id or a name.
func TestSharedCachesShowEachScopeItsOwn(t *testing.T) {
	// The informers' stores, as the API server filled them.
	stores := map[string]cache.Indexer{}
	mutation := func(kind string) cache.MutationCache {
		store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{
			byWorkflow: labelIndex(spark.LabelWorkflowUID), byNode: labelIndex(spark.LabelNode), byApp: labelIndex(spark.LabelAppSelector)})
		stores[kind] = store
		return cache.NewIntegerResourceVersionMutationCache(logr.Discard(), store, store, time.Minute, true)
	}
	shared := &runCaches{pods: mutation("pods"), configMaps: mutation("configmaps"), services: mutation("services"),
		ingresses: mutation("ingresses"), ingressesSynced: func() bool { return true }}
	a := &Scope{Workflow: spark.WorkflowRef{Namespace: "ns", Name: "a", UID: "uid-a"}, runCaches: shared}
	b := &Scope{Workflow: spark.WorkflowRef{Namespace: "ns", Name: "b", UID: "uid-b"}, runCaches: shared}
	meta := func(name, uid string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: "1", Labels: map[string]string{
			spark.LabelWorkflowUID: uid, spark.LabelNode: "same-hash", spark.LabelAppSelector: "same-app"}}
	}
	for _, o := range []*corev1.Pod{{ObjectMeta: meta("driver-a", "uid-a")}, {ObjectMeta: meta("driver-b", "uid-b")}, {ObjectMeta: meta("driver-x", "uid-b")}} {
		if err := stores["pods"].Add(o); err != nil {
			t.Fatal(err)
		}
	}
	if err := stores["configmaps"].Add(&corev1.ConfigMap{ObjectMeta: meta("conf-b", "uid-b")}); err != nil {
		t.Fatal(err)
	}
	names := func(pods []*corev1.Pod) []string {
		var out []string
		for _, p := range pods {
			out = append(out, p.Name)
		}
		slices.Sort(out)
		return out
	}
	if got := names(a.Pods()); !slices.Equal(got, []string{"driver-a"}) {
		t.Errorf("a's pods %v", got)
	}
	if got := names(b.Pods()); !slices.Equal(got, []string{"driver-b", "driver-x"}) {
		t.Errorf("b's pods %v", got)
	}
	if got := names(a.PodsOfApp("same-app")); !slices.Equal(got, []string{"driver-a"}) {
		t.Errorf("a's pods of the application %v", got)
	}
	if len(a.ConfigMapsOfNode("any")) != 0 {
		t.Errorf("a sees b's ConfigMaps")
	}
	if a.Pod("driver-b") != nil || b.Pod("driver-b") == nil {
		t.Errorf("Pod by name crosses workflows")
	}
	if a.Cached(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "conf-b"}}) != nil || b.Cached(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "conf-b"}}) == nil {
		t.Errorf("Cached crosses workflows")
	}
}
