package objects

import (
	"encoding/json"
	"io/fs"
	"path"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/templates"
)

// body is the SparkPi input, decoded and defaulted.
func body(t *testing.T) *spec.SparkApplicationSpec {
	t.Helper()
	return readBody(t, "testdata/spark-pi.input.yaml")
}

func kitchenSink(t *testing.T) (*spec.SparkApplicationSpec, *Set) {
	t.Helper()
	s := readBody(t, "testdata/kitchen-sink.input.yaml")
	objs, err := newBuilder(t).Cluster(s, goldenRuns["kitchen-sink"])
	if err != nil {
		t.Fatal(err)
	}
	return s, objs
}

func TestClusterIsDeterministic(t *testing.T) {
	b := newBuilder(t)
	s := readBody(t, "testdata/kitchen-sink.input.yaml")
	r := goldenRuns["kitchen-sink"]
	first, err := b.Cluster(s, r)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ { // map iteration order differs between calls
		again, err := b.Cluster(s, r)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(first, again) {
			t.Fatalf("call %d built different objects for the same run", i+2)
		}
	}
	other, err := b.Cluster(s, with(r, func(r *Run) { r.NodeID += "-other" }))
	if err != nil {
		t.Fatal(err)
	}
	if other.Driver.Name == first.Driver.Name || other.Service.Name == first.Service.Name || other.ConfigMap.Name == first.ConfigMap.Name {
		t.Errorf("another node got the same names: %s", other.Driver.Name)
	}
}

func TestClusterDoesNotChangeTheBodyOrTheSkeletons(t *testing.T) {
	b := newBuilder(t)
	s := readBody(t, "testdata/kitchen-sink.input.yaml")
	before, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	skeleton := b.driver.DeepCopy()
	objs, err := b.Cluster(s, goldenRuns["kitchen-sink"])
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := json.Marshal(s); string(after) != string(before) {
		t.Error("Cluster changed the body")
	}
	if !reflect.DeepEqual(b.driver, skeleton) {
		t.Error("Cluster changed the driver skeleton")
	}
	objs.Driver.Spec.Tolerations[0].Key = "changed"
	if s.Driver.Tolerations[0].Key == "changed" {
		t.Error("the driver pod shares memory with the body")
	}
}

func TestSparkConfShapesTheDriverAsWithSparkSubmit(t *testing.T) {
	s := body(t)
	s.SparkConf = map[string]string{
		"spark.driver.memory":                        "2g", // beats driver.memory 512m
		"spark.driver.port":                          "7100",
		"spark.ui.port":                              "4050",
		"spark.kubernetes.driverEnv.FROM_CONF":       "1",
		"spark.kubernetes.driver.node.selector.zone": "a",
		"spark.kubernetes.driver.scheduler.name":     "yunikorn",
		"spark.kubernetes.driver.secrets.creds":      "/mnt/creds",
		"spark.driver.resource.gpu.amount":           "1",
		"spark.driver.resource.gpu.vendor":           "nvidia.com",
	}
	objs, err := newBuilder(t).Cluster(s, goldenRuns["default"])
	if err != nil {
		t.Fatal(err)
	}
	ctr := objs.Driver.Spec.Containers[0]
	if got := ctr.Resources.Requests.Memory().String(); got != "2432Mi" { // 2048 + 384
		t.Errorf("memory request %s, want 2432Mi", got)
	}
	if got := ctr.Resources.Limits["nvidia.com/gpu"]; got.String() != "1" {
		t.Errorf("custom resource limit %v", ctr.Resources.Limits)
	}
	if p := ctr.Ports[0]; p.ContainerPort != 7100 || objs.Service.Spec.Ports[0].Port != 7100 || objs.Service.Spec.Ports[2].Port != 4050 {
		t.Errorf("ports: container %+v, service %+v", ctr.Ports, objs.Service.Spec.Ports)
	}
	if env(ctr, "FROM_CONF") != "1" {
		t.Error("spark.kubernetes.driverEnv.* not in the driver's environment")
	}
	if objs.Driver.Spec.NodeSelector["zone"] != "a" || objs.Driver.Spec.SchedulerName != "yunikorn" {
		t.Errorf("node selector %v, scheduler %q", objs.Driver.Spec.NodeSelector, objs.Driver.Spec.SchedulerName)
	}
	if !slices.ContainsFunc(ctr.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "creds-volume" && m.MountPath == "/mnt/creds" }) {
		t.Errorf("spark.kubernetes.driver.secrets.creds not mounted: %+v", ctr.VolumeMounts)
	}

	s.SparkConf = map[string]string{"spark.driver.resource.gpu.amount": "1"}
	if _, err := newBuilder(t).Cluster(s, goldenRuns["default"]); err == nil || !strings.Contains(err.Error(), "vendor") {
		t.Errorf("resource without vendor: err %v", err)
	}
	s.SparkConf = map[string]string{"spark.driver.port": "http"}
	if _, err := newBuilder(t).Cluster(s, goldenRuns["default"]); err == nil {
		t.Error("unparsable spark.driver.port accepted")
	}
}

func TestDriverArgs(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    spec.SparkApplicationSpec
		want string
	}{
		{"scala", spec.SparkApplicationSpec{Type: spec.TypeScala, MainClass: ptr.To("a.Main"), MainApplicationFile: ptr.To("local:///app.jar"), Arguments: []string{"x", "y z"}},
			"driver|--properties-file|/opt/spark/conf/spark.properties|--class|a.Main|local:///app.jar|x|y z"},
		{"java without a main file", spec.SparkApplicationSpec{Type: spec.TypeJava, MainClass: ptr.To("a.Main")},
			"driver|--properties-file|/opt/spark/conf/spark.properties|--class|a.Main|spark-internal"},
		{"java without a class", spec.SparkApplicationSpec{Type: spec.TypeJava, MainApplicationFile: ptr.To("local:///app.jar")},
			"driver|--properties-file|/opt/spark/conf/spark.properties|local:///app.jar"},
		{"python", spec.SparkApplicationSpec{Type: spec.TypePython, MainClass: ptr.To("ignored"), MainApplicationFile: ptr.To("local:///m.py")},
			"driver|--properties-file|/opt/spark/conf/spark.properties|--class|org.apache.spark.deploy.PythonRunner|local:///m.py"},
		{"r", spec.SparkApplicationSpec{Type: spec.TypeR, MainApplicationFile: ptr.To("local:///m.R")},
			"driver|--properties-file|/opt/spark/conf/spark.properties|--class|org.apache.spark.deploy.RRunner|local:///m.R"},
		{"proxy user", spec.SparkApplicationSpec{Type: spec.TypeScala, ProxyUser: ptr.To("bob"), MainClass: ptr.To("a.Main"), MainApplicationFile: ptr.To("local:///app.jar")},
			"driver|--proxy-user|bob|--properties-file|/opt/spark/conf/spark.properties|--class|a.Main|local:///app.jar"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := driverArgs(&tc.s)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "|") != tc.want {
				t.Errorf("args\n got %q\nwant %q", strings.Join(got, "|"), tc.want)
			}
		})
	}
	if _, err := driverArgs(&spec.SparkApplicationSpec{Type: spec.TypePython}); err == nil {
		t.Error("python without mainApplicationFile accepted")
	}
}

func TestJarsCarryTheMainJarOfJVMApplicationsOnly(t *testing.T) {
	r := goldenRuns["default"]
	s := body(t)
	s.Deps.Jars = []string{"local:///dep.jar"}
	if got := Properties(s, r)[spark.ConfJars]; got != "local:///dep.jar,"+*s.MainApplicationFile {
		t.Errorf("spark.jars %q", got)
	}
	s.Deps.Jars = []string{*s.MainApplicationFile}
	if got := Properties(s, r)[spark.ConfJars]; got != *s.MainApplicationFile {
		t.Errorf("main jar listed twice: %q", got)
	}
	s.Type, s.Deps.Jars = spec.TypePython, nil
	if got, ok := Properties(s, r)[spark.ConfJars]; ok {
		t.Errorf("python application has spark.jars %q", got)
	}
}

func TestExecutorTemplateIsWhatSparkReads(t *testing.T) {
	s, objs := kitchenSink(t)
	raw := objs.ConfigMap.Data[spark.ExecutorPodTemplateKey]
	var tmpl corev1.Pod
	if err := yaml.UnmarshalStrict([]byte(raw), &tmpl); err != nil {
		t.Fatalf("executor template does not decode as a Pod: %v\n%s", err, raw)
	}
	if tmpl.Kind != "Pod" || tmpl.APIVersion != "v1" {
		t.Errorf("template kind %s %s", tmpl.APIVersion, tmpl.Kind)
	}
	i := containerIndex(&tmpl, spark.ExecutorContainerName)
	if i < 0 {
		t.Fatalf("no %s container in %s", spark.ExecutorContainerName, raw)
	}
	if got := tmpl.Spec.Containers[i].Resources.Limits["nvidia.com/gpu"]; got.String() != "2" {
		t.Errorf("executor gpu limit %v", tmpl.Spec.Containers[i].Resources.Limits)
	}
	if len(tmpl.Spec.Tolerations) != 1 || tmpl.Spec.Affinity == nil || tmpl.Spec.NodeSelector["pool"] != "executors" || !tmpl.Spec.HostNetwork {
		t.Errorf("executor pod fields missing from the template: %+v", tmpl.Spec)
	}
	// Only the volumes the executors mount.
	var names []string
	for _, v := range tmpl.Spec.Volumes {
		names = append(names, v.Name)
	}
	if slices.Contains(names, "unused") || slices.Contains(names, "spark-local-dir-1") || !slices.Contains(names, "cache") {
		t.Errorf("executor volumes %v: want the mounted ones only", names)
	}
	_ = s

	// The driver mounts the template where the conf says it is.
	p := Properties(readBody(t, "testdata/kitchen-sink.input.yaml"), goldenRuns["kitchen-sink"])
	file := p[spark.ConfExecutorPodTemplateFile]
	dir, base := path.Split(file)
	ctr := objs.Driver.Spec.Containers[0]
	vol := volume(objs.Driver, spark.PodTemplateVolumeName)
	if !slices.ContainsFunc(ctr.VolumeMounts, func(m corev1.VolumeMount) bool {
		return m.Name == spark.PodTemplateVolumeName && m.MountPath == strings.TrimSuffix(dir, "/")
	}) || vol == nil || vol.ConfigMap.Items[0].Path != base || vol.ConfigMap.Items[0].Key != spark.ExecutorPodTemplateKey || vol.ConfigMap.Name != objs.ConfigMap.Name {
		t.Errorf("template %s is not mounted from the ConfigMap: mounts %+v volume %+v", file, ctr.VolumeMounts, vol)
	}
}

func TestDriverVolumesAreOnlyTheMountedOnes(t *testing.T) {
	_, objs := kitchenSink(t)
	if volume(objs.Driver, "unused") != nil || volume(objs.Driver, "cache") != nil {
		t.Error("driver has volumes it does not mount")
	}
	if volume(objs.Driver, "data") == nil {
		t.Error("driver lacks its mounted volume")
	}
	s := body(t)
	s.Driver.VolumeMounts = []corev1.VolumeMount{{Name: "missing", MountPath: "/x"}}
	if _, err := newBuilder(t).Cluster(s, goldenRuns["default"]); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("mount of an undeclared volume: err %v", err)
	}
}

func TestConfLayout(t *testing.T) {
	s := body(t)
	objs, err := newBuilder(t).Cluster(s, goldenRuns["default"])
	if err != nil {
		t.Fatal(err)
	}
	ctr := objs.Driver.Spec.Containers[0]
	if env(ctr, spark.EnvConfDir) != spark.ConfDir {
		t.Errorf("SPARK_CONF_DIR %q without sparkConfigMap, want %s", env(ctr, spark.EnvConfDir), spark.ConfDir)
	}
	if !strings.Contains(strings.Join(ctr.Args, " "), "--properties-file /opt/spark/conf/spark.properties") {
		t.Errorf("args %v", ctr.Args)
	}
	if objs.ConfigMap.Data[spark.PropertiesFile] == "" || !ptr.Deref(objs.ConfigMap.Immutable, false) {
		t.Error("ConfigMap lacks spark.properties or is mutable")
	}

	s.SparkConfigMap = ptr.To("my-spark-conf")
	s.HadoopConfigMap = ptr.To("my-hadoop-conf")
	objs, err = newBuilder(t).Cluster(s, goldenRuns["default"])
	if err != nil {
		t.Fatal(err)
	}
	ctr = objs.Driver.Spec.Containers[0]
	// The user's files become SPARK_CONF_DIR; the properties file stays
	// where --properties-file says.
	if env(ctr, spark.EnvConfDir) != spark.SparkConfigMapDir || env(ctr, spark.EnvHadoopConfDir) != spark.HadoopConfDir {
		t.Errorf("SPARK_CONF_DIR %q HADOOP_CONF_DIR %q", env(ctr, spark.EnvConfDir), env(ctr, spark.EnvHadoopConfDir))
	}
	if mount(ctr, spark.ConfVolumeName) != spark.ConfDir || mount(ctr, spark.SparkConfigMapVolumeName) != spark.SparkConfigMapDir || mount(ctr, spark.HadoopConfigMapVolumeName) != spark.HadoopConfDir {
		t.Errorf("mounts %+v", ctr.VolumeMounts)
	}
	count := 0
	for _, e := range ctr.Env {
		if e.Name == spark.EnvConfDir {
			count++
		}
	}
	if count != 1 {
		t.Errorf("SPARK_CONF_DIR set %d times", count)
	}
}

func TestLocalDirs(t *testing.T) {
	for _, tc := range []struct {
		name     string
		conf     map[string]string
		mounts   []corev1.VolumeMount
		wantDirs string
		medium   corev1.StorageMedium
	}{
		{name: "default", wantDirs: spark.LocalDirPath},
		{name: "spark.local.dir", conf: map[string]string{"spark.local.dir": "/a,/b"}, wantDirs: "/a,/b"},
		{name: "tmpfs", conf: map[string]string{"spark.kubernetes.local.dirs.tmpfs": "true"}, wantDirs: spark.LocalDirPath, medium: corev1.StorageMediumMemory},
		{name: "the body's volume", mounts: []corev1.VolumeMount{{Name: "spark-local-dir-1", MountPath: "/scratch"}}, wantDirs: "/scratch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := body(t)
			s.SparkConf = tc.conf
			s.Volumes = []corev1.Volume{{Name: "spark-local-dir-1", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/mnt"}}}}
			s.Driver.VolumeMounts = tc.mounts
			objs, err := newBuilder(t).Cluster(s, goldenRuns["default"])
			if err != nil {
				t.Fatal(err)
			}
			ctr := objs.Driver.Spec.Containers[0]
			if got := env(ctr, spark.EnvLocalDirs); got != tc.wantDirs {
				t.Errorf("SPARK_LOCAL_DIRS %q, want %q", got, tc.wantDirs)
			}
			for i, d := range strings.Split(tc.wantDirs, ",") {
				name := "spark-local-dir-" + string(rune('1'+i))
				if mount(ctr, name) != d {
					t.Errorf("%s mounted at %q, want %q", name, mount(ctr, name), d)
				}
				v := volume(objs.Driver, name)
				if v == nil {
					t.Fatalf("no volume %s", name)
				}
				if tc.mounts == nil && (v.EmptyDir == nil || v.EmptyDir.Medium != tc.medium) {
					t.Errorf("volume %s = %+v, want an emptyDir with medium %q", name, v.VolumeSource, tc.medium)
				}
			}
		})
	}
}

func TestCheckRun(t *testing.T) {
	b := newBuilder(t)
	good := goldenRuns["default"]
	for what, tc := range map[string]struct {
		r Run
		s func(*spec.SparkApplicationSpec)
	}{
		"no uid":             {r: with(good, func(r *Run) { r.Workflow.UID = "" })},
		"no namespace":       {r: with(good, func(r *Run) { r.Workflow.Namespace = "" })},
		"no node":            {r: with(good, func(r *Run) { r.NodeID = "" })},
		"no template key":    {r: with(good, func(r *Run) { r.TemplateKey = "" })},
		"bad template key":   {r: with(good, func(r *Run) { r.TemplateKey = "not a label!" })},
		"client mode":        {r: good, s: func(s *spec.SparkApplicationSpec) { s.Mode = spec.ModeClient }},
		"executor memLimit":  {r: good, s: func(s *spec.SparkApplicationSpec) { s.Executor.MemoryLimit = ptr.To("4g") }},
		"no image":           {r: good, s: func(s *spec.SparkApplicationSpec) { s.Image = nil }},
		"fractional memory":  {r: good, s: func(s *spec.SparkApplicationSpec) { s.Driver.Memory = ptr.To("1.5g") }},
		"driver limit < req": {r: good, s: func(s *spec.SparkApplicationSpec) { s.Driver.MemoryLimit = ptr.To("512m") }},
		"bad secret key ref": {r: good, s: func(s *spec.SparkApplicationSpec) {
			s.SparkConf = map[string]string{"spark.kubernetes.driver.secretKeyRef.X": "nokey"}
		}},
		"invalid version":    {r: good, s: func(s *spec.SparkApplicationSpec) { s.SparkVersion = "3.5.1 (custom)" }},
		"invalid user label": {r: good, s: func(s *spec.SparkApplicationSpec) { s.Driver.Labels = map[string]string{"bad key!": "x"} }},
		"zero memory factor": {r: good, s: func(s *spec.SparkApplicationSpec) { s.MemoryOverheadFactor = ptr.To("0") }},
	} {
		s := body(t)
		if tc.s != nil {
			tc.s(s)
		}
		objs, err := b.Cluster(s, tc.r)
		t.Logf("%s: %v", what, err)
		if err == nil {
			t.Errorf("%s: built %s, want an error", what, objs.Driver.Name)
		}
	}
}

func TestNewReadsAnOperatorsSkeletons(t *testing.T) {
	embedded := func(name string) []byte {
		raw, err := fs.ReadFile(templates.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	driver := string(embedded(DriverPodFile)) + `  tolerations:
    - key: spark-only
      operator: Exists
`
	b, err := New(fstest.MapFS{
		DriverPodFile:           {Data: []byte(driver)},
		ExecutorPodTemplateFile: {Data: embedded(ExecutorPodTemplateFile)},
	})
	if err != nil {
		t.Fatalf("New with an added toleration: %v", err)
	}
	_, objs := kitchenSink(t)
	objs2, err := b.Cluster(readBody(t, "testdata/kitchen-sink.input.yaml"), goldenRuns["kitchen-sink"])
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(objs2.Driver.Spec.Tolerations), len(objs.Driver.Spec.Tolerations)+1; got != want || objs2.Driver.Spec.Tolerations[0].Key != "spark-only" {
		t.Errorf("tolerations %+v: want the skeleton's first, then the body's", objs2.Driver.Spec.Tolerations)
	}

	for what, files := range map[string]fstest.MapFS{
		"missing driver":    {ExecutorPodTemplateFile: {Data: embedded(ExecutorPodTemplateFile)}},
		"missing executor":  {DriverPodFile: {Data: embedded(DriverPodFile)}},
		"renamed container": {DriverPodFile: {Data: []byte(strings.ReplaceAll(string(embedded(DriverPodFile)), "spark-kubernetes-driver", "main"))}, ExecutorPodTemplateFile: {Data: embedded(ExecutorPodTemplateFile)}},
		"unknown field":     {DriverPodFile: {Data: []byte("spec:\n  containers:\n  - name: spark-kubernetes-driver\n    colour: red\n")}, ExecutorPodTemplateFile: {Data: embedded(ExecutorPodTemplateFile)}},
		"named":             {DriverPodFile: {Data: []byte("metadata:\n  name: fixed\nspec:\n  containers:\n  - name: spark-kubernetes-driver\n")}, ExecutorPodTemplateFile: {Data: embedded(ExecutorPodTemplateFile)}},
		"restarting":        {DriverPodFile: {Data: []byte("spec:\n  restartPolicy: Always\n  containers:\n  - name: spark-kubernetes-driver\n")}, ExecutorPodTemplateFile: {Data: embedded(ExecutorPodTemplateFile)}},
		"argo label":        {DriverPodFile: {Data: []byte("metadata:\n  labels:\n    workflows.argoproj.io/workflow: x\nspec:\n  containers:\n  - name: spark-kubernetes-driver\n")}, ExecutorPodTemplateFile: {Data: embedded(ExecutorPodTemplateFile)}},
		"not a pod":         {DriverPodFile: {Data: []byte("kind: Service\nspec:\n  containers:\n  - name: spark-kubernetes-driver\n")}, ExecutorPodTemplateFile: {Data: embedded(ExecutorPodTemplateFile)}},
		"executor renamed":  {DriverPodFile: {Data: embedded(DriverPodFile)}, ExecutorPodTemplateFile: {Data: []byte("spec:\n  containers:\n  - name: executor\n")}},
	} {
		if _, err := New(files); err == nil {
			t.Errorf("%s: New accepted it", what)
		}
	}
}

func TestEmbeddedDriverSkeleton(t *testing.T) {
	objs, err := newBuilder(t).Cluster(body(t), goldenRuns["default"])
	if err != nil {
		t.Fatal(err)
	}
	ctr := objs.Driver.Spec.Containers[0]
	if ctr.Name != spark.DriverContainerName || ctr.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError {
		t.Errorf("container %s, termination message policy %q", ctr.Name, ctr.TerminationMessagePolicy)
	}
	if objs.Driver.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q", objs.Driver.Spec.RestartPolicy)
	}
	bind := slices.IndexFunc(ctr.Env, func(e corev1.EnvVar) bool { return e.Name == spark.EnvDriverBindAddress })
	if bind < 0 || ctr.Env[bind].ValueFrom == nil || ctr.Env[bind].ValueFrom.FieldRef.FieldPath != "status.podIP" {
		t.Errorf("no %s from status.podIP: %+v", spark.EnvDriverBindAddress, ctr.Env)
	}
}

func env(ctr corev1.Container, name string) string {
	for _, e := range ctr.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func mount(ctr corev1.Container, name string) string {
	for _, m := range ctr.VolumeMounts {
		if m.Name == name {
			return m.MountPath
		}
	}
	return ""
}

func volume(p *corev1.Pod, name string) *corev1.Volume {
	for i := range p.Spec.Volumes {
		if p.Spec.Volumes[i].Name == name {
			return &p.Spec.Volumes[i]
		}
	}
	return nil
}

func TestServiceIsSparksHeadlessDriverService(t *testing.T) {
	r := goldenRuns["kitchen-sink"]
	_, objs := kitchenSink(t)
	n := NamesFor(r)
	svc := objs.Service
	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("clusterIP %q, want None (headless)", svc.Spec.ClusterIP)
	}
	wantSelector := map[string]string{spark.LabelAppSelector: n.AppID, spark.LabelRole: spark.RoleDriver}
	if !reflect.DeepEqual(svc.Spec.Selector, wantSelector) {
		t.Errorf("selector %v, want %v", svc.Spec.Selector, wantSelector)
	}
	for k, v := range svc.Spec.Selector {
		if objs.Driver.Labels[k] != v {
			t.Errorf("selector %s=%s does not select the driver (%q)", k, v, objs.Driver.Labels[k])
		}
	}
	var ports []string
	for _, p := range svc.Spec.Ports {
		ports = append(ports, p.Name+":"+p.TargetPort.String())
	}
	if got := strings.Join(ports, ","); got != "driver-rpc-port:7078,blockmanager:7079,spark-ui:4040" {
		t.Errorf("ports %s", got)
	}
	host := Properties(readBody(t, "testdata/kitchen-sink.input.yaml"), r)[spark.ConfDriverHost]
	if host != svc.Name+"."+r.Workflow.Namespace+".svc" {
		t.Errorf("spark.driver.host %q does not name the Service %s", host, svc.Name)
	}
	if svc.Labels["svc-team"] != "data" || svc.Annotations["example.com/scrape"] != "true" {
		t.Errorf("serviceLabels/serviceAnnotations missing: %v %v", svc.Labels, svc.Annotations)
	}
}
