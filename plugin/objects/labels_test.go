package objects

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

func TestNoArgoKeysAnywhere(t *testing.T) {
	_, objs := kitchenSink(t)
	for _, o := range []any{objs.Driver, objs.ConfigMap, objs.Service} {
		raw, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), "workflows.argoproj.io") {
			t.Errorf("%T carries a workflows.argoproj.io key: %s", o, raw)
		}
	}
	b := newBuilder(t)
	for what, mutate := range map[string]func(*spec.SparkApplicationSpec){
		"driver label": func(s *spec.SparkApplicationSpec) {
			s.Driver.Labels = map[string]string{"workflows.argoproj.io/workflow": "x"}
		},
		"driver annotation": func(s *spec.SparkApplicationSpec) {
			s.Driver.Annotations = map[string]string{"workflows.argoproj.io/node-id": "x"}
		},
		"executor label": func(s *spec.SparkApplicationSpec) {
			s.Executor.Labels = map[string]string{"workflows.argoproj.io/workflow": "x"}
		},
		"executor annotation": func(s *spec.SparkApplicationSpec) {
			s.Executor.Annotations = map[string]string{"workflows.argoproj.io/x": "x"}
		},
		"service label": func(s *spec.SparkApplicationSpec) {
			s.Driver.ServiceLabels = map[string]string{"workflows.argoproj.io/x": "x"}
		},
		"sparkConf label": func(s *spec.SparkApplicationSpec) {
			s.SparkConf = map[string]string{"spark.kubernetes.driver.label.workflows.argoproj.io/x": "x"}
		},
	} {
		s := body(t)
		mutate(s)
		if _, err := b.Cluster(s, goldenRuns["default"]); err == nil || !strings.Contains(err.Error(), "Argo") {
			t.Errorf("%s under workflows.argoproj.io/: err %v, want a refusal naming Argo", what, err)
		}
	}
}

func TestOwnerReferences(t *testing.T) {
	r := goldenRuns["default"]
	objs, err := newBuilder(t).Cluster(body(t), r)
	if err != nil {
		t.Fatal(err)
	}
	refs := objs.Driver.OwnerReferences
	if len(refs) != 1 {
		t.Fatalf("driver owner references %+v, want the Workflow", refs)
	}
	ref := refs[0]
	if ref.APIVersion != "argoproj.io/v1alpha1" || ref.Kind != "Workflow" || ref.Name != r.Workflow.Name || ref.UID != types.UID(r.Workflow.UID) {
		t.Errorf("driver owner %+v, want Workflow %s/%s", ref, r.Workflow.Name, r.Workflow.UID)
	}
	if !ptr.Deref(ref.Controller, false) || ref.BlockOwnerDeletion != nil {
		t.Errorf("driver owner controller %v blockOwnerDeletion %v, want true and unset", ref.Controller, ref.BlockOwnerDeletion)
	}
	if len(objs.ConfigMap.OwnerReferences)+len(objs.Service.OwnerReferences) != 0 {
		t.Error("ConfigMap or Service owned before the driver exists")
	}

	created := objs.Driver.DeepCopy()
	created.UID = "driver-uid"
	OwnedBy(objs, created)
	for kind, refs := range map[string][]ownerRef{"configmap": convert(objs.ConfigMap.OwnerReferences), "service": convert(objs.Service.OwnerReferences)} {
		want := []ownerRef{{"v1", "Pod", created.Name, "driver-uid", true}}
		if !reflect.DeepEqual(refs, want) {
			t.Errorf("%s owners %+v, want %+v", kind, refs, want)
		}
	}
	OwnedBy(objs, created) // idempotent
	if len(objs.Service.OwnerReferences) != 1 {
		t.Errorf("OwnedBy twice gave %d owners", len(objs.Service.OwnerReferences))
	}
	OwnedBy(nil, created) // nil-safe
	OwnedBy(objs, nil)
}

type ownerRef struct {
	APIVersion, Kind, Name string
	UID                    types.UID
	Controller             bool
}

func convert(refs []metav1.OwnerReference) []ownerRef {
	var out []ownerRef
	for _, r := range refs {
		out = append(out, ownerRef{r.APIVersion, r.Kind, r.Name, r.UID, ptr.Deref(r.Controller, false)})
	}
	return out
}

func TestLabels(t *testing.T) {
	r := goldenRuns["kitchen-sink"]
	_, objs := kitchenSink(t)
	n := NamesFor(r)
	want := map[string]string{
		spark.LabelAppSelector: n.AppID,
		spark.LabelRole:        spark.RoleDriver,
		spark.LabelVersion:     "3.5.1",
		spark.LabelWorkflowUID: r.Workflow.UID,
		spark.LabelNode:        NodeLabel(r.NodeID),
		spark.LabelTemplate:    r.TemplateKey,
		spark.LabelAttempt:     "2",
		spark.LabelManagedBy:   "sparkplug",
		"team":                 "data",
		"from-conf":            "yes", // spark.kubernetes.driver.label.* in sparkConf
	}
	for k, v := range want {
		if got := objs.Driver.Labels[k]; got != v {
			t.Errorf("driver label %s = %q, want %q", k, got, v)
		}
	}
	if got := objs.Driver.Annotations[spark.AnnotationNodeID]; got != r.NodeID {
		t.Errorf("node-id annotation %q", got)
	}
	if got := objs.Driver.Annotations["example.com/run"]; got != "etl "+n.AppID {
		t.Errorf("{{APP_ID}} not substituted in a driver annotation: %q", got)
	}
	for _, meta := range []map[string]string{objs.ConfigMap.Labels, objs.Service.Labels} {
		for _, k := range append(slices.Clone(sparkplugLabelKeys), spark.LabelAppSelector) {
			if meta[k] != want[k] {
				t.Errorf("label %s = %q, want %q", k, meta[k], want[k])
			}
		}
		if _, ok := meta[spark.LabelRole]; ok {
			t.Errorf("ConfigMap or Service labelled %s; Spark's selectors would pick it", spark.LabelRole)
		}
	}
	props := Properties(readBody(t, "testdata/kitchen-sink.input.yaml"), r)
	for _, k := range sparkplugLabelKeys {
		if got := props[spark.ConfExecutorLabelPrefix+k]; got != want[k] {
			t.Errorf("executor label %s = %q, want %q (executors must land in the workflow's cache)", k, got, want[k])
		}
	}
}

func TestSparkplugLabelsWinOverTheBodys(t *testing.T) {
	s := body(t)
	s.Driver.Labels = map[string]string{spark.LabelWorkflowUID: "spoofed", spark.LabelManagedBy: "me"}
	s.SparkConf = map[string]string{spark.ConfExecutorLabelPrefix + spark.LabelWorkflowUID: "spoofed", spark.ConfAppID: "spark-0", spark.ConfDriverPodName: "other"}
	r := goldenRuns["default"]
	objs, err := newBuilder(t).Cluster(s, r)
	if err != nil {
		t.Fatal(err)
	}
	if objs.Driver.Labels[spark.LabelWorkflowUID] != r.Workflow.UID || objs.Driver.Labels[spark.LabelManagedBy] != spark.ManagedByValue {
		t.Errorf("the body's labels replaced sparkplug's: %v", objs.Driver.Labels)
	}
	p := Properties(s, r)
	n := NamesFor(r)
	for k, v := range map[string]string{spark.ConfExecutorLabelPrefix + spark.LabelWorkflowUID: r.Workflow.UID, spark.ConfAppID: n.AppID, spark.ConfDriverPodName: n.DriverPod} {
		if p[k] != v {
			t.Errorf("%s = %q, want sparkplug's %q", k, p[k], v)
		}
	}
	for _, k := range OwnedConf() {
		if _, ok := p[k]; !ok {
			t.Errorf("owned key %s missing from the conf", k)
		}
	}
}

func TestSparkReservedLabelsAreRefused(t *testing.T) {
	for _, k := range []string{spark.LabelRole, spark.LabelAppSelector, spark.LabelExecID} {
		s := body(t)
		s.Executor.Labels = map[string]string{k: "x"}
		if _, err := newBuilder(t).Cluster(s, goldenRuns["default"]); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("executor label %s: err %v, want a refusal naming it", k, err)
		}
	}
}
