//go:build integration

package objects

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// What client mode builds passes the API server's validation and
// admission, for bodies that exercise each of its differences: the driver
// pod with spark-submit's command line and the conf directory, the
// ConfigMap, the headless and UI Services owned by the driver, and an
// executor made from the template in the conf directory.
func TestClientObjectsServerSideDryRun(t *testing.T) {
	ctx := context.Background()
	b := newBuilder(t)
	core := testCluster.Client.CoreV1()
	for name, mutate := range map[string]func(*spec.SparkApplicationSpec){
		"golden": func(*spec.SparkApplicationSpec) {},
		"python": func(s *spec.SparkApplicationSpec) {
			s.Type, s.MainClass, s.MainApplicationFile = spec.TypePython, nil, ptr.To("local:///opt/app/main.py")
			s.PythonVersion = ptr.To("3")
		},
		"ui options, sparkConfigMap, ports": func(s *spec.SparkApplicationSpec) {
			s.SparkUIOptions = &spec.SparkUIConfiguration{
				ServicePort: ptr.To[int32](80), ServiceType: ptr.To(corev1.ServiceTypeNodePort),
				ServiceAnnotations: map[string]string{"example.com/ui": "yes"},
			}
			s.SparkConfigMap = ptr.To("site-spark-conf")
			s.SparkConf = map[string]string{spark.ConfDriverPort: "7100", spark.ConfBlockManagerPort: "7101", spark.ConfUIPort: "4041"}
		},
		"monitoring": func(s *spec.SparkApplicationSpec) {
			s.Monitoring = &spec.MonitoringSpec{ExposeDriverMetrics: true, ExposeExecutorMetrics: true,
				Prometheus: &spec.PrometheusSpec{JmxExporterJar: "/prometheus/jmx_prometheus_javaagent.jar"}}
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := readBody(t, "testdata/client-mode.input.yaml")
			mutate(s)
			if errs := spec.Validate(s); len(errs) > 0 {
				t.Fatalf("the body is invalid: %v", errs.ToAggregate())
			}
			run := goldenRuns["default"]
			ns := run.Workflow.Namespace
			prepare(t, ns, s.Driver.ServiceAccount, s.Executor.ServiceAccount)
			objs, err := b.Build(s, run)
			if err != nil {
				t.Fatal(err)
			}

			created, err := core.Pods(ns).Create(ctx, objs.Driver, dryRun)
			if err != nil {
				t.Fatalf("driver pod: %v", err)
			}
			ctr := created.Spec.Containers[0]
			if ctr.Args[0] != spark.ClientSparkSubmit || !slices.Contains(ctr.Args, "spark.driver.bindAddress=$(SPARK_DRIVER_BIND_ADDRESS)") {
				t.Errorf("the API server's driver runs %q", ctr.Args)
			}
			driver := objs.Driver.DeepCopy()
			driver.UID = "6f1d1d5e-0000-4000-8000-000000000002"
			OwnedBy(objs, driver)
			if _, err := core.ConfigMaps(ns).Create(ctx, objs.ConfigMap, dryRun); err != nil {
				t.Errorf("ConfigMap: %v", err)
			}
			for _, o := range append([]Object{objs.Service}, objs.Extra...) {
				svc, ok := o.(*corev1.Service)
				if !ok {
					t.Errorf("object %T: teach this test to create it", o)
					continue
				}
				got, err := core.Services(ns).Create(ctx, svc, dryRun)
				if err != nil {
					t.Errorf("Service %s: %v", svc.Name, err)
					continue
				}
				if refs := got.OwnerReferences; len(refs) != 1 || refs[0].UID != driver.UID {
					t.Errorf("Service %s owners %+v, want the driver", got.Name, refs)
				}
				for k, v := range got.Spec.Selector {
					if created.Labels[k] != v {
						t.Errorf("Service %s selects %s=%s, which the driver lacks", got.Name, k, v)
					}
				}
			}
			if len(objs.Extra) != 1 || objs.Extra[0].GetName() != UIServiceName(objs.Driver.Name) {
				t.Errorf("extras %v, want the UI Service", objs.Extra)
			}

			// An executor as Spark makes it from the template it reads
			// from the conf directory.
			var exec corev1.Pod
			if err := yaml.UnmarshalStrict([]byte(objs.ConfigMap.Data[spark.ExecutorPodTemplateKey]), &exec); err != nil {
				t.Fatal(err)
			}
			exec.Name = strings.TrimSuffix(objs.Driver.Name, "driver") + "exec-1"
			exec.Spec.RestartPolicy = corev1.RestartPolicyNever
			for i := range exec.Spec.Containers {
				if exec.Spec.Containers[i].Image == "" {
					exec.Spec.Containers[i].Image = "spark:3.5.3"
				}
			}
			if _, err := core.Pods(ns).Create(ctx, &exec, dryRun); err != nil {
				t.Errorf("an executor from the template: %v", err)
			}
		})
	}
}
