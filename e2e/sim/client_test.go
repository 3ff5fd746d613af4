package sim

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// A client-mode driver's conf is its ConfigMap's spark-defaults.conf: the
// simulator reads it there and makes the executors it describes.
func TestExecutorPodsOfGoldenClientMode(t *testing.T) {
	driver, cm := goldenDriver(t, "client-mode")
	if _, ok := cm.Data[spark.PropertiesFile]; ok {
		t.Fatalf("the client-mode ConfigMap has %s; this test is about %s", spark.PropertiesFile, spark.ClientDefaultsFile)
	}
	e := &Executors{client: fake.NewSimpleClientset(&cm)}
	conf, err := e.properties(context.Background(), &driver)
	if err != nil {
		t.Fatal(err)
	}
	pods, err := executorPods(&driver, conf)
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 2 {
		t.Fatalf("%d executors, want spark.executor.instances = 2", len(pods))
	}
	ctr := pods[0].Spec.Containers[0]
	if ctr.Image != "spark:3.5.3" || pods[0].Labels["team"] != "data" || pods[0].Labels[spark.LabelAppSelector] != driver.Labels[spark.LabelAppSelector] {
		t.Errorf("executor %s: image %q labels %v", pods[0].Name, ctr.Image, pods[0].Labels)
	}
	if got := clientEnvValue(ctr, "SPARK_DRIVER_URL"); got != "spark://CoarseGrainedScheduler@"+conf[spark.ConfDriverHost]+":7078" || conf[spark.ConfDriverHost] == "" {
		t.Errorf("SPARK_DRIVER_URL %q", got)
	}
}

func clientEnvValue(ctr corev1.Container, name string) string {
	for _, e := range ctr.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}
