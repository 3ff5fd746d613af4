package sim

import (
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/e2e/sparkconf"
	"github.com/sparkplug-io/sparkplug/e2e/stages"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

func TestDriverAnnotations(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    Driver
		want map[string]string
	}{
		{"success", Succeed(1500 * time.Millisecond), map[string]string{
			stages.AnnotationRunSeconds: "2", stages.AnnotationExitCode: "0"}},
		{"failure", Fail(time.Second, 1, "boom"), map[string]string{
			stages.AnnotationRunSeconds: "1", stages.AnnotationExitCode: "1", stages.AnnotationMessage: "boom"}},
		{"oom", Driver{ExitCode: 137, Reason: "OOMKilled"}, map[string]string{
			stages.AnnotationRunSeconds: "0", stages.AnnotationExitCode: "137", stages.AnnotationReason: "OOMKilled"}},
		{"waiting", Driver{WaitingReason: "ImagePullBackOff", Run: time.Hour}, map[string]string{
			stages.AnnotationWaitingReason: "ImagePullBackOff"}},
		{"evicted", Driver{Evict: true, Run: 3 * time.Second}, map[string]string{
			stages.AnnotationRunSeconds: "3", stages.AnnotationEvict: "true"}},
		{"forever", Driver{Forever: true}, map[string]string{}},
	} {
		if got := tc.d.Annotations(); !maps.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

const workflow = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
spec:
  templates:
  - name: main
    dag: {tasks: [{name: a, template: pi}]}
  - name: pi
    plugin:
      spark:
        driver: {cores: 1, annotations: {team: data}}
  - name: other
    plugin:
      spark: {}
  - name: slack
    plugin:
      slack: {}
`

func TestInject(t *testing.T) {
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(workflow), &obj); err != nil {
		t.Fatal(err)
	}
	n, err := Inject(obj, Succeed(time.Second), "pi")
	if err != nil || n != 1 {
		t.Fatalf("Inject(pi) = %d, %v; want 1 body", n, err)
	}
	n, err = Inject(obj, Fail(0, 2, ""))
	if err != nil || n != 2 {
		t.Fatalf("Inject(all) = %d, %v; want 2 bodies", n, err)
	}
	if _, err := Inject(obj, Driver{}, "slack"); err == nil {
		t.Fatal("Inject into a template that is not spark: want an error")
	}
	tmpls := obj["spec"].(map[string]any)["templates"].([]any)
	pi := tmpls[1].(map[string]any)["plugin"].(map[string]any)["spark"].(map[string]any)["driver"].(map[string]any)
	ann := pi["annotations"].(map[string]any)
	if ann["team"] != "data" || ann[stages.AnnotationExitCode] != "2" || pi["cores"] != float64(1) {
		t.Errorf("pi's driver = %v: the user's fields must stay, the last simulation wins", pi)
	}
	other := tmpls[2].(map[string]any)["plugin"].(map[string]any)["spark"].(map[string]any)
	if other["driver"].(map[string]any)["annotations"].(map[string]any)[stages.AnnotationExitCode] != "2" {
		t.Errorf("a body without driver gets one: %v", other)
	}

	cron := map[string]any{"kind": "CronWorkflow", "spec": map[string]any{"workflowSpec": obj["spec"]}}
	if n, err := Inject(cron, Succeed(0)); err != nil || n != 2 {
		t.Errorf("Inject(CronWorkflow) = %d, %v; want 2", n, err)
	}
	if _, err := Inject(map[string]any{"kind": "ConfigMap"}, Succeed(0)); err == nil {
		t.Error("Inject(ConfigMap): want an error")
	}
}

// The executors of the builder's own golden SparkPi are what Spark would
// create for it.
func TestExecutorPodsOfGoldenSparkPi(t *testing.T) {
	driver, cm := goldenDriver(t, "spark-pi")
	driver.UID = "driver-uid"
	conf, err := sparkconf.Load(cm.Data[spark.PropertiesFile])
	if err != nil {
		t.Fatal(err)
	}
	pods, err := executorPods(&driver, conf)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := sparkconf.ExecutorCount(conf); len(pods) != want || want != 1 {
		t.Fatalf("%d executors, want spark.executor.instances = 1", len(pods))
	}
	p := pods[0]
	if p.Name != conf[spark.ConfExecutorPodNamePrefix]+"-exec-1" {
		t.Errorf("name %s", p.Name)
	}
	for k, v := range map[string]string{
		spark.LabelRole:        spark.RoleExecutor,
		spark.LabelAppSelector: driver.Labels[spark.LabelAppSelector],
		spark.LabelExecID:      "1",
		spark.LabelWorkflowUID: driver.Labels[spark.LabelWorkflowUID],
		spark.LabelNode:        driver.Labels[spark.LabelNode],
	} {
		if p.Labels[k] != v {
			t.Errorf("label %s=%q, want %q", k, p.Labels[k], v)
		}
	}
	ref := p.OwnerReferences
	if len(ref) != 1 || ref[0].Kind != "Pod" || ref[0].UID != driver.UID || ref[0].Controller == nil || !*ref[0].Controller {
		t.Errorf("owner %v, want the driver pod as controller", ref)
	}
	if p.Spec.ServiceAccountName != driver.Spec.ServiceAccountName || p.Spec.Containers[0].Image != "spark:3.5.1" {
		t.Errorf("service account %q image %q", p.Spec.ServiceAccountName, p.Spec.Containers[0].Image)
	}
}

// goldenDriver reads the driver pod and ConfigMap of one of the builder's
// golden files (plugin/objects/testdata/<name>.golden.yaml).
func goldenDriver(t *testing.T, name string) (corev1.Pod, corev1.ConfigMap) {
	t.Helper()
	b, err := os.ReadFile("../../plugin/objects/testdata/" + name + ".golden.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var driver corev1.Pod
	var cm corev1.ConfigMap
	for _, doc := range strings.Split(string(b), "\n---\n") {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "Pod":
			err = yaml.Unmarshal([]byte(doc), &driver)
		case "ConfigMap":
			err = yaml.Unmarshal([]byte(doc), &cm)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return driver, cm
}
