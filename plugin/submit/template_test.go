package submit

import (
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// The driver template keeps what only a template can carry and drops what
// Spark's submission steps add, which would be there twice.
func TestDriverTemplate(t *testing.T) {
	in, objs := goldenInput(t, filepath.Join("testdata", "etl.input.yaml"))
	before := objs.Driver.DeepCopy()
	tmpl := DriverTemplate(in.Driver, in.Spec, in.Conf)
	if !equalPods(before, objs.Driver) {
		t.Fatal("DriverTemplate changed the driver it was given")
	}

	if tmpl.Name != "" || tmpl.Namespace != "" || len(tmpl.Labels) > 0 || len(tmpl.Annotations) > 0 {
		t.Errorf("template metadata %+v: the conf carries name, namespace, labels and annotations", tmpl.ObjectMeta)
	}
	if refs := tmpl.OwnerReferences; len(refs) != 1 || refs[0].Kind != "Workflow" || string(refs[0].UID) != goldenRun.Workflow.UID {
		t.Errorf("owners %+v, want the Workflow", refs)
	}
	var ctr *corev1.Container
	for i := range tmpl.Spec.Containers {
		if tmpl.Spec.Containers[i].Name == spark.DriverContainerName {
			ctr = &tmpl.Spec.Containers[i]
		}
	}
	if ctr == nil {
		t.Fatalf("no %s container", spark.DriverContainerName)
	}
	if ctr.Image != "" || ctr.ImagePullPolicy != "" || len(ctr.Args) > 0 {
		t.Errorf("image %q, pull policy %q, args %q: Spark sets them", ctr.Image, ctr.ImagePullPolicy, ctr.Args)
	}
	for _, p := range ctr.Ports {
		if slices.Contains(sparkPorts, p.Name) {
			t.Errorf("port %s: Spark adds it", p.Name)
		}
	}
	if len(ctr.Ports) != 1 || ctr.Ports[0].Name != "metrics" {
		t.Errorf("ports %+v, want the body's metrics port only", ctr.Ports)
	}
	for _, e := range ctr.Env {
		switch e.Name {
		case "POD_NAME":
		default:
			t.Errorf("env %s: Spark sets it (or it comes from the conf)", e.Name)
		}
	}
	if len(ctr.Env) != 1 {
		t.Errorf("env %+v, want the body's POD_NAME only", ctr.Env)
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range tmpl.Spec.Volumes {
		volumes[v.Name] = v
	}
	for _, gone := range []string{spark.ConfVolumeName, spark.PodTemplateVolumeName, "gcp-sa-volume"} {
		if _, ok := volumes[gone]; ok {
			t.Errorf("volume %s: spark-submit adds its own", gone)
		}
	}
	for _, kept := range []string{"data", "spark-local-dir-1"} {
		if _, ok := volumes[kept]; !ok {
			t.Errorf("the body's volume %s is missing", kept)
		}
	}
	for _, m := range ctr.VolumeMounts {
		if _, ok := volumes[m.Name]; !ok {
			t.Errorf("mount %s of a volume the template does not have", m.Name)
		}
	}
	if len(tmpl.Spec.ImagePullSecrets) != 0 {
		t.Errorf("image pull secrets %v: Spark adds those of the conf", tmpl.Spec.ImagePullSecrets)
	}
	if len(tmpl.Spec.Tolerations) != 1 || len(tmpl.Spec.Containers) != 2 {
		t.Errorf("tolerations %v, containers %d: the body's pod fields must stay", tmpl.Spec.Tolerations, len(tmpl.Spec.Containers))
	}
	if q := ctr.Resources.Limits["nvidia.com/gpu"]; q.String() != "1" {
		t.Errorf("gpu limit %v: Spark has no conf for the body's gpu, the template must keep it", ctr.Resources.Limits)
	}
}

// sparkplug's default scratch volume goes (Spark makes its own); with
// none in the body, nothing named spark-local-dir-* is left.
func TestDriverTemplateDropsDefaultScratch(t *testing.T) {
	in, objs := goldenInput(t, filepath.Join("testdata", "spark-pi.input.yaml"))
	if !slices.ContainsFunc(objs.Driver.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == spark.LocalDirVolumeName }) {
		t.Fatal("the native driver has no default scratch volume; the test is stale")
	}
	tmpl := DriverTemplate(in.Driver, in.Spec, in.Conf)
	if len(tmpl.Spec.Volumes) != 0 || len(tmpl.Spec.Containers[0].VolumeMounts) != 0 {
		t.Errorf("volumes %+v, mounts %+v: want none", tmpl.Spec.Volumes, tmpl.Spec.Containers[0].VolumeMounts)
	}
}

func equalPods(a, b *corev1.Pod) bool {
	x, _ := yaml.Marshal(a)
	y, _ := yaml.Marshal(b)
	return string(x) == string(y)
}
