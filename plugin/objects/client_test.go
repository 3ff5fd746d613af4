package objects

import (
	"encoding/json"
	"io/fs"
	"maps"
	"path"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/templates"
)

// clientBody is the client-mode golden input, decoded and defaulted.
func clientBody(t *testing.T) *spec.SparkApplicationSpec {
	t.Helper()
	return readBody(t, "testdata/client-mode.input.yaml")
}

func buildClient(t *testing.T, s *spec.SparkApplicationSpec) *Set {
	t.Helper()
	objs, err := newBuilder(t).Build(s, goldenRuns["default"])
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return objs
}

// defaults reads spark-defaults.conf back as java.util.Properties does.
func defaults(t *testing.T, cm *corev1.ConfigMap) map[string]string {
	t.Helper()
	text, ok := cm.Data[spark.ClientDefaultsFile]
	if !ok {
		t.Fatalf("ConfigMap %s has no %s (keys %v)", cm.Name, spark.ClientDefaultsFile, slices.Sorted(maps.Keys(cm.Data)))
	}
	return loadProperties(t, text)
}

// The conf of a client-mode run is cluster mode's but for the keys client
// mode changes: the deploy mode, the master, where the executor template
// is, and no submitInDriver. The driver host, ports and pod name stay: the
// executors reach the driver, and are owned by it, through them.
func TestClientConfDiffersFromClusterOnlyWhereClientModeDoes(t *testing.T) {
	r := goldenRuns["default"]
	client := clientBody(t)
	cluster := clientBody(t)
	cluster.Mode = spec.ModeCluster
	objs := buildClient(t, client)
	got := defaults(t, objs.ConfigMap)
	if !reflect.DeepEqual(got, Properties(client, r)) {
		t.Error("spark-defaults.conf is not Properties of the client-mode body")
	}
	want := Properties(cluster, r)
	want[spark.ConfSubmitDeployMode] = "client"
	want[spark.ConfMaster] = "k8s://https://kubernetes.default.svc:443"
	want[spark.ConfExecutorPodTemplateFile] = "/opt/spark/conf/executor-pod-template.yaml"
	delete(want, spark.ConfSubmitInDriver)
	delete(want, spark.ConfDriverMaster)
	for _, k := range slices.Sorted(maps.Keys(merged(want, got))) {
		if got[k] != want[k] {
			t.Errorf("%s = %q, want %q", k, got[k], want[k])
		}
	}

	n := NamesFor(r)
	for k, v := range map[string]string{
		spark.ConfSubmitDeployMode:      "client",
		spark.ConfDriverHost:            n.Service + "." + r.Workflow.Namespace + ".svc",
		spark.ConfDriverPodName:         objs.Driver.Name,
		spark.ConfDriverPort:            "7078",
		spark.ConfBlockManagerPort:      "7079",
		spark.ConfAppID:                 objs.Driver.Labels[spark.LabelAppSelector],
		spark.ConfNamespace:             r.Workflow.Namespace,
		spark.ConfExecutorPodNamePrefix: n.ExecutorPrefix,
	} {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if objs.Service.Name != n.Service || objs.Driver.Name != n.DriverPod {
		t.Errorf("service %s and driver %s are not the run's names", objs.Service.Name, objs.Driver.Name)
	}
	for _, k := range []string{spark.ConfSubmitInDriver, spark.ConfDriverMaster, spark.ConfDriverBindAddress} {
		if _, ok := got[k]; ok {
			t.Errorf("client mode's conf has %s", k)
		}
	}
}

func TestClientMaster(t *testing.T) {
	for _, tc := range []struct{ kubernetesMaster, want string }{
		{"", spark.DefaultMaster},
		{"https://10.0.0.1:6443", "k8s://https://10.0.0.1:6443"},
		{"k8s://https://api.example.com", "k8s://https://api.example.com"},
	} {
		s := clientBody(t)
		s.Driver.KubernetesMaster = nil
		if tc.kubernetesMaster != "" {
			s.Driver.KubernetesMaster = ptr.To(tc.kubernetesMaster)
		}
		objs := buildClient(t, s)
		if got := defaults(t, objs.ConfigMap)[spark.ConfMaster]; got != tc.want {
			t.Errorf("kubernetesMaster %q: spark.master %q, want %q", tc.kubernetesMaster, got, tc.want)
		}
		args := objs.Driver.Spec.Containers[0].Args
		if i := slices.Index(args, "--master"); i < 0 || args[i+1] != tc.want {
			t.Errorf("kubernetesMaster %q: args %q, want --master %s", tc.kubernetesMaster, args, tc.want)
		}
	}
}

func TestClientDriverRunsSparkSubmit(t *testing.T) {
	const head = "/opt/spark/bin/spark-submit --master k8s://https://kubernetes.default.svc:443 --deploy-mode client " +
		"--properties-file /opt/spark/conf/spark-defaults.conf --conf spark.driver.bindAddress=$(SPARK_DRIVER_BIND_ADDRESS)"
	for _, tc := range []struct {
		name   string
		mutate func(*spec.SparkApplicationSpec)
		want   string
	}{
		{"scala", func(s *spec.SparkApplicationSpec) { s.ProxyUser = nil },
			head + " --class org.apache.spark.examples.SparkPi local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar 1000"},
		{"proxy user", func(*spec.SparkApplicationSpec) {},
			head + " --proxy-user etl --class org.apache.spark.examples.SparkPi local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar 1000"},
		{"python: spark-submit picks the runner", func(s *spec.SparkApplicationSpec) {
			s.ProxyUser, s.Type, s.MainClass = nil, spec.TypePython, nil
			s.MainApplicationFile, s.Arguments = ptr.To("local:///opt/app/main.py"), []string{"--day", "2024-01-01"}
		}, head + " local:///opt/app/main.py --day 2024-01-01"},
		{"R", func(s *spec.SparkApplicationSpec) {
			s.ProxyUser, s.Type, s.MainClass, s.MainApplicationFile, s.Arguments = nil, spec.TypeR, nil, ptr.To("local:///opt/app/job.R"), nil
		}, head + " local:///opt/app/job.R"},
		{"no resource", func(s *spec.SparkApplicationSpec) { s.ProxyUser, s.MainApplicationFile, s.Arguments = nil, nil, nil },
			head + " --class org.apache.spark.examples.SparkPi spark-internal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := clientBody(t)
			tc.mutate(s)
			ctr := buildClient(t, s).Driver.Spec.Containers[0]
			if ctr.Name != spark.DriverContainerName {
				t.Fatalf("first container %s, want %s", ctr.Name, spark.DriverContainerName)
			}
			if got := strings.Join(ctr.Args, " "); got != tc.want {
				t.Errorf("args\n  %s\nwant\n  %s", got, tc.want)
			}
			if len(ctr.Command) != 0 {
				t.Errorf("command %q: the image's entrypoint must stay", ctr.Command)
			}
		})
	}

	s := clientBody(t)
	s.Type, s.MainClass, s.MainApplicationFile = spec.TypePython, nil, nil
	if _, err := newBuilder(t).Build(s, goldenRuns["default"]); err == nil {
		t.Error("a Python application without mainApplicationFile was built")
	}
}

// The command line expands $(SPARK_DRIVER_BIND_ADDRESS): the container has
// it from the pod's IP, even when an operator's skeleton leaves it out.
func TestClientDriverBindsToThePodIP(t *testing.T) {
	bare, err := New(fstest.MapFS{
		DriverPodFile:           {Data: []byte("spec:\n  containers:\n  - name: spark-kubernetes-driver\n")},
		ExecutorPodTemplateFile: {Data: mustRead(t, templates.FS, ExecutorPodTemplateFile)},
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]*Builder{"embedded skeleton": newBuilder(t), "skeleton without the variable": bare} {
		objs, err := b.Build(clientBody(t), goldenRuns["default"])
		if err != nil {
			t.Fatal(err)
		}
		ctr := objs.Driver.Spec.Containers[0]
		var found []corev1.EnvVar
		for _, e := range ctr.Env {
			if e.Name == spark.EnvDriverBindAddress {
				found = append(found, e)
			}
		}
		if len(found) != 1 || found[0].ValueFrom == nil || found[0].ValueFrom.FieldRef == nil || found[0].ValueFrom.FieldRef.FieldPath != "status.podIP" {
			t.Errorf("%s: %s is %+v, want once, from status.podIP", name, spark.EnvDriverBindAddress, found)
		}
		if !slices.Contains(ctr.Args, "spark.driver.bindAddress=$("+spark.EnvDriverBindAddress+")") {
			t.Errorf("%s: args %q do not bind the driver to $(%s)", name, ctr.Args, spark.EnvDriverBindAddress)
		}
	}
}

func mustRead(t *testing.T, fsys fs.FS, name string) []byte {
	t.Helper()
	raw, err := fs.ReadFile(fsys, name)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// The driver's conf directory is the run's ConfigMap, read-only: the
// files spark-submit reads are there, and the executor template is where
// spark.kubernetes.executor.podTemplateFile says.
func TestClientConfDirectory(t *testing.T) {
	objs := buildClient(t, clientBody(t))
	cm, pod := objs.ConfigMap, objs.Driver
	ctr := pod.Spec.Containers[0]
	if got := slices.Sorted(maps.Keys(cm.Data)); !reflect.DeepEqual(got, []string{spark.ExecutorPodTemplateKey, spark.ClientDefaultsFile, spark.ClientEnvFile}) {
		t.Errorf("ConfigMap keys %v", got)
	}
	if !ptr.Deref(cm.Immutable, false) || cm.Name != ConfigMapOf(pod) {
		t.Errorf("ConfigMap %s immutable %v: want %s, immutable", cm.Name, cm.Immutable, ConfigMapOf(pod))
	}
	v := volume(pod, spark.ConfVolumeName)
	if v == nil || v.ConfigMap == nil || v.ConfigMap.Name != cm.Name {
		t.Fatalf("no conf volume of %s: %+v", cm.Name, pod.Spec.Volumes)
	}
	files := map[string]string{}
	for _, it := range v.ConfigMap.Items {
		if _, ok := cm.Data[it.Key]; !ok {
			t.Errorf("volume item %s is not a key of the ConfigMap", it.Key)
		}
		files[path.Join(spark.ConfDir, it.Path)] = it.Key
	}
	var m *corev1.VolumeMount
	for i := range ctr.VolumeMounts {
		if ctr.VolumeMounts[i].Name == spark.ConfVolumeName {
			m = &ctr.VolumeMounts[i]
		}
	}
	if m == nil || m.MountPath != spark.ConfDir || !m.ReadOnly {
		t.Errorf("conf mount %+v, want %s read-only", m, spark.ConfDir)
	}
	if volume(pod, spark.PodTemplateVolumeName) != nil || mount(ctr, spark.PodTemplateVolumeName) != "" {
		t.Error("the driver still mounts cluster mode's pod template volume")
	}
	conf := defaults(t, cm)
	if files[conf[spark.ConfExecutorPodTemplateFile]] != spark.ExecutorPodTemplateKey {
		t.Errorf("podTemplateFile %s is not the mounted template (files %v)", conf[spark.ConfExecutorPodTemplateFile], files)
	}
	args := ctr.Args
	if i := slices.Index(args, "--properties-file"); i < 0 || files[args[i+1]] != spark.ClientDefaultsFile {
		t.Errorf("--properties-file in %q is not the mounted %s", args, spark.ClientDefaultsFile)
	}
	if files[path.Join(spark.ConfDir, spark.ClientEnvFile)] != spark.ClientEnvFile || env(ctr, spark.EnvConfDir) != spark.ConfDir {
		t.Errorf("spark-env.sh is not in SPARK_CONF_DIR %q", env(ctr, spark.EnvConfDir))
	}
	for _, line := range strings.Split(strings.TrimSpace(cm.Data[spark.ClientEnvFile]), "\n") {
		if !strings.HasPrefix(line, "#") {
			t.Errorf("spark-env.sh sets something: %q", line)
		}
	}
	var tmpl corev1.Pod
	if err := yaml.UnmarshalStrict([]byte(cm.Data[spark.ExecutorPodTemplateKey]), &tmpl); err != nil || tmpl.Spec.Containers[0].Name != spark.ExecutorContainerName {
		t.Errorf("executor template does not decode to a pod with %s: %v", spark.ExecutorContainerName, err)
	}
}

// A sparkConfigMap becomes SPARK_CONF_DIR as in cluster mode; spark-submit
// still reads the run's own conf through --properties-file.
func TestClientWithSparkConfigMap(t *testing.T) {
	s := clientBody(t)
	s.SparkConfigMap = ptr.To("my-spark-conf")
	ctr := buildClient(t, s).Driver.Spec.Containers[0]
	if got := env(ctr, spark.EnvConfDir); got != spark.SparkConfigMapDir {
		t.Errorf("SPARK_CONF_DIR %q, want %s", got, spark.SparkConfigMapDir)
	}
	if !strings.Contains(strings.Join(ctr.Args, " "), "--properties-file /opt/spark/conf/spark-defaults.conf") {
		t.Errorf("args %q", ctr.Args)
	}
}

// The headless Service selects this driver only and exposes the ports
// spark-defaults.conf names; the UI Service forwards 4040, or what
// sparkUIOptions says.
func TestClientServices(t *testing.T) {
	s := clientBody(t)
	s.SparkConf = map[string]string{spark.ConfDriverPort: "7100", spark.ConfBlockManagerPort: "7101"}
	objs := buildClient(t, s)
	svc := objs.Service
	want := map[string]string{spark.LabelAppSelector: objs.Driver.Labels[spark.LabelAppSelector], spark.LabelRole: spark.RoleDriver}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone || !reflect.DeepEqual(svc.Spec.Selector, want) {
		t.Errorf("service %s: clusterIP %q selector %v, want headless, %v", svc.Name, svc.Spec.ClusterIP, svc.Spec.Selector, want)
	}
	conf := defaults(t, objs.ConfigMap)
	ports := map[string]string{}
	for _, p := range svc.Spec.Ports {
		ports[p.Name] = p.TargetPort.String()
	}
	if ports[spark.DriverPortName] != conf[spark.ConfDriverPort] || ports[spark.BlockManagerPortName] != conf[spark.ConfBlockManagerPort] || ports[spark.DriverPortName] != "7100" {
		t.Errorf("service ports %v, conf driver %s block manager %s", ports, conf[spark.ConfDriverPort], conf[spark.ConfBlockManagerPort])
	}
	if conf[spark.ConfDriverHost] != svc.Name+"."+svc.Namespace+".svc" {
		t.Errorf("spark.driver.host %s does not name %s", conf[spark.ConfDriverHost], svc.Name)
	}

	if len(objs.Extra) != 1 {
		t.Fatalf("extra objects %d, want the UI Service", len(objs.Extra))
	}
	ui, ok := objs.Extra[0].(*corev1.Service)
	if !ok || ui.Name != UIServiceName(objs.Driver.Name) || ui.Spec.Type != corev1.ServiceTypeClusterIP ||
		!reflect.DeepEqual(ui.Spec.Selector, want) || len(ui.Spec.Ports) != 1 || ui.Spec.Ports[0].Port != 4040 || ui.Spec.Ports[0].TargetPort.IntValue() != spark.UIPort {
		t.Errorf("UI service %+v", objs.Extra[0])
	}

	s = clientBody(t)
	s.SparkUIOptions = &spec.SparkUIConfiguration{ServicePort: ptr.To[int32](80), ServiceLabels: map[string]string{"team": "data"}}
	ui = buildClient(t, s).Extra[0].(*corev1.Service)
	if ui.Spec.Ports[0].Port != 80 || ui.Spec.Ports[0].TargetPort.IntValue() != spark.UIPort || ui.Labels["team"] != "data" {
		t.Errorf("UI service with sparkUIOptions: %+v", ui)
	}
}

// Ownership and labels as in cluster mode: the driver is the Workflow's,
// everything else the driver's, every object labelled with the run.
func TestClientOwnershipAndLabels(t *testing.T) {
	objs := buildClient(t, clientBody(t))
	cluster := clientBody(t)
	cluster.Mode = spec.ModeCluster
	clusterObjs, err := newBuilder(t).Build(cluster, goldenRuns["default"])
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(objs.Driver.Labels, clusterObjs.Driver.Labels) || !reflect.DeepEqual(objs.Driver.Annotations, clusterObjs.Driver.Annotations) ||
		!reflect.DeepEqual(objs.Driver.OwnerReferences, clusterObjs.Driver.OwnerReferences) {
		t.Error("the client-mode driver's labels, annotations or owners differ from cluster mode's")
	}
	driver := objs.Driver.DeepCopy()
	driver.UID = types.UID("0f0e0d0c-0000-4000-8000-000000000001")
	OwnedBy(objs, driver)
	companions := objs.Companions()
	if len(companions) != 3 {
		t.Fatalf("%d companions, want ConfigMap, Service and UI Service", len(companions))
	}
	for _, o := range companions {
		refs := o.GetOwnerReferences()
		if len(refs) != 1 || refs[0].UID != driver.UID || refs[0].Kind != "Pod" || !ptr.Deref(refs[0].Controller, false) {
			t.Errorf("%s owners %+v, want the driver", o.GetName(), refs)
		}
		for k, v := range sparkplugLabels(goldenRuns["default"]) {
			if o.GetLabels()[k] != v {
				t.Errorf("%s label %s=%q, want %q", o.GetName(), k, o.GetLabels()[k], v)
			}
		}
	}
}

func TestClientObjectsCarryNoArgoKeys(t *testing.T) {
	objs := buildClient(t, clientBody(t))
	all := []any{objs.Driver, objs.ConfigMap, objs.Service}
	for _, o := range objs.Extra {
		all = append(all, o)
	}
	for _, o := range all {
		raw, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), "workflows.argoproj.io/") {
			t.Errorf("%T carries a workflows.argoproj.io/ key: %s", o, raw)
		}
	}
	s := clientBody(t)
	s.Executor.Labels = map[string]string{"workflows.argoproj.io/workflow": "x"}
	if _, err := newBuilder(t).Build(s, goldenRuns["default"]); err == nil || !strings.Contains(err.Error(), "Argo") {
		t.Errorf("an executor label under workflows.argoproj.io/: err %v, want a refusal naming Argo", err)
	}
}

func TestBuildDispatchesOnTheMode(t *testing.T) {
	b := newBuilder(t)
	r := goldenRuns["default"]
	client := clientBody(t)
	cluster := clientBody(t)
	cluster.Mode = spec.ModeCluster
	viaBuild, err := b.Build(client, r)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := b.Client(client, r)
	if err != nil || !reflect.DeepEqual(viaBuild, direct) {
		t.Errorf("Build of a client-mode body is not Client's (err %v)", err)
	}
	viaBuild, err = b.Build(cluster, r)
	if err != nil {
		t.Fatal(err)
	}
	if direct, err := b.Cluster(cluster, r); err != nil || !reflect.DeepEqual(viaBuild, direct) {
		t.Errorf("Build of a cluster-mode body is not Cluster's (err %v)", err)
	}
	if _, err := b.Cluster(client, r); err == nil {
		t.Error("Cluster built a client-mode body")
	}
	if _, err := b.Client(cluster, r); err == nil {
		t.Error("Client built a cluster-mode body")
	}
	other := clientBody(t)
	other.Mode = "in-cluster-client"
	if _, err := b.Build(other, r); err == nil {
		t.Error("Build accepted mode in-cluster-client")
	}
}

func TestClientIsDeterministicAndLeavesTheBodyAlone(t *testing.T) {
	b := newBuilder(t)
	s := clientBody(t)
	before, _ := json.Marshal(s)
	first, err := b.Client(s, goldenRuns["default"])
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		again, err := b.Client(s, goldenRuns["default"])
		if err != nil || !reflect.DeepEqual(first, again) {
			t.Fatalf("call %d built different objects (err %v)", i+2, err)
		}
	}
	if after, _ := json.Marshal(s); string(after) != string(before) {
		t.Error("Client changed the body")
	}
}

// Every key client mode sets over the body's sparkConf is rejected there,
// so a user's value is never silently replaced: cluster mode's owned keys,
// and the bind address on spark-submit's command line.
func TestClientOwnedConfIsRejectedBySpecValidation(t *testing.T) {
	for _, k := range append(OwnedConf(), spark.ConfDriverBindAddress) {
		body := `{"type":"Scala","mode":"client","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar","sparkConf":{"` + k + `":"x"}}`
		_, err := spec.Parse([]byte(body))
		if !refused(err, "spark.sparkConf["+k+"]") {
			t.Errorf("sparkConf[%s] is not rejected in client mode: %v", k, err)
		}
	}
}
