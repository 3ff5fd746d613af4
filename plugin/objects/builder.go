package objects

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/confvalue"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// Skeleton file names in the templates file system.
const (
	DriverPodFile           = "driver-pod.yaml"
	ExecutorPodTemplateFile = "executor-pod-template.yaml"
)

// Set is what one run creates, in creation order: the PodGroup, if
// any, then the driver pod, then, owned by it (OwnedBy), its ConfigMap and
// Service, then the Extra objects.
type Set struct {
	// PodGroup is the batch scheduler's PodGroup (podgroup.go), nil for
	// most bodies. The scheduler needs it before it sees the driver, so it
	// is created first, owned by the Workflow, and handed to the driver
	// once the driver exists (OwnedBy).
	PodGroup  *unstructured.Unstructured
	Driver    *corev1.Pod
	ConfigMap *corev1.ConfigMap
	Service   *corev1.Service
	// Extra are the objects only some bodies ask for, each owned by the
	// driver like the ConfigMap and Service (exposed, ingress.go): the
	// Spark UI Service (a *corev1.Service named UIServiceName) of
	// sparkUIOptions, which client mode always has, and the
	// *networkingv1.Ingress to it when the body has a URL format for it;
	// a Service and an Ingress per driverIngressOptions entry. Create them
	// after the driver, as the ConfigMap and Service are.
	Extra []Object
	// ExecutorTemplate is the executor pod template, which the ConfigMap
	// holds as YAML, and Conf the run's Spark conf (Properties), from
	// which Spark adds to the executors what the template lacks: read by
	// checks (package policy), never created.
	ExecutorTemplate *corev1.Pod
	Conf             map[string]string
	// Workload is the Kueue Workload of a queued step's attempt
	// (workload.go), nil for the others. It is created, owned by the
	// Workflow, before anything else, and the rest only once Kueue
	// admits it.
	Workload *unstructured.Unstructured
}

// Companions are the objects created after the driver and owned by it:
// the ConfigMap, the Service, then the Extra objects.
func (o *Set) Companions() []Object {
	out := make([]Object, 0, 2+len(o.Extra))
	if o.ConfigMap != nil {
		out = append(out, o.ConfigMap)
	}
	if o.Service != nil {
		out = append(out, o.Service)
	}
	return append(out, o.Extra...)
}

// Object is a typed API object the builder makes (*corev1.Service, ...).
type Object interface {
	metav1.Object
	runtime.Object
}

// Builder builds runs' objects on top of the skeletons it decoded once.
// It is safe for concurrent use: Cluster only reads the skeletons.
type Builder struct {
	driver   *corev1.Pod
	executor *corev1.Pod
}

// New decodes the skeletons from fsys: templates.FS, or an operator's
// directory (os.DirFS) with files of the same names. A skeleton must decode
// strictly into a Pod, keep Spark's container name, and leave to the run
// what the run owns (name, namespace, owner, restartPolicy other than
// Never).
func New(fsys fs.FS) (*Builder, error) {
	driver, err := readSkeleton(fsys, DriverPodFile, spark.DriverContainerName)
	if err != nil {
		return nil, err
	}
	if p := driver.Spec.RestartPolicy; p != "" && p != corev1.RestartPolicyNever {
		return nil, fmt.Errorf("%s: restartPolicy %s: a driver pod must never restart (sparkplug's restart policy relaunches it)", DriverPodFile, p)
	}
	executor, err := readSkeleton(fsys, ExecutorPodTemplateFile, spark.ExecutorContainerName)
	if err != nil {
		return nil, err
	}
	return &Builder{driver: driver, executor: executor}, nil
}

func readSkeleton(fsys fs.FS, name, container string) (*corev1.Pod, error) {
	raw, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("read template %s: %w", name, err)
	}
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict(raw, &pod); err != nil {
		return nil, fmt.Errorf("decode template %s: %w", name, err)
	}
	if pod.Kind != "" && pod.Kind != "Pod" || pod.APIVersion != "" && pod.APIVersion != "v1" {
		return nil, fmt.Errorf("template %s: kind %s %s, want v1 Pod", name, pod.APIVersion, pod.Kind)
	}
	if pod.Name != "" || pod.GenerateName != "" || pod.Namespace != "" || len(pod.OwnerReferences) > 0 {
		return nil, fmt.Errorf("template %s: metadata.name, generateName, namespace and ownerReferences belong to each run; remove them", name)
	}
	if containerIndex(&pod, container) < 0 {
		return nil, fmt.Errorf("template %s: no container named %s; Spark and sparkplug find the application's container by that name", name, container)
	}
	for _, k := range slices.Concat(slices.Collect(maps.Keys(pod.Labels)), slices.Collect(maps.Keys(pod.Annotations))) {
		if strings.HasPrefix(k, argoPrefix) {
			return nil, fmt.Errorf("template %s: metadata key %s: keys under %s are Argo's own", name, k, argoPrefix)
		}
	}
	return &pod, nil
}

// Build builds the objects of a run in the body's deploy mode.
func (b *Builder) Build(s *spec.SparkApplicationSpec, r Run) (*Set, error) {
	switch s.Mode {
	case spec.ModeCluster, "":
		return b.build(s, r, clusterMode)
	case spec.ModeClient:
		return b.build(s, r, clientMode)
	default:
		return nil, fmt.Errorf("deploy mode %q is not supported", s.Mode)
	}
}

// Cluster builds the objects spark-submit --deploy-mode cluster would
// create for the body (already defaulted and validated) and the run.
func (b *Builder) Cluster(s *spec.SparkApplicationSpec, r Run) (*Set, error) {
	if s.Mode != "" && s.Mode != spec.ModeCluster {
		return nil, fmt.Errorf("mode %s: Cluster builds cluster mode only", s.Mode)
	}
	return b.build(s, r, clusterMode)
}

// deployMode is what sets one deploy mode's objects apart; build makes
// the rest alike for both.
type deployMode struct {
	// driver changes the driver pod built as in cluster mode; nil: none.
	driver func(pod *corev1.Pod, s *spec.SparkApplicationSpec, n Names, c map[string]string) error
	// ui is the options of the UI Service; nil: no UI Service.
	ui func(s *spec.SparkApplicationSpec) *spec.SparkUIConfiguration
	// configMap is the run's ConfigMap.
	configMap func(r Run, n Names, c map[string]string, executorTemplate string, files map[string]string) *corev1.ConfigMap
}

// clusterMode: the driver runs the application, as spark-submit
// --deploy-mode cluster starts it; a UI Service when sparkUIOptions asks.
var clusterMode = deployMode{
	ui:        func(s *spec.SparkApplicationSpec) *spec.SparkUIConfiguration { return s.SparkUIOptions },
	configMap: configMap,
}

// build makes the objects of a run in a deploy mode: the driver pod, the
// executor pod template in the ConfigMap, the headless driver Service,
// the UI Service and Ingresses, the PodGroup; then checks their metadata.
func (b *Builder) build(s *spec.SparkApplicationSpec, r Run, m deployMode) (*Set, error) {
	if err := checkRun(s, r); err != nil {
		return nil, err
	}
	n := namesFor(s, r)
	c := Properties(s, r)
	if err := checkConf(c); err != nil {
		return nil, err
	}
	driver, err := b.driverPod(s, r, n, c)
	if err != nil {
		return nil, fmt.Errorf("build driver pod %s: %w", n.DriverPod, err)
	}
	if m.driver != nil {
		if err := m.driver(driver, s, n, c); err != nil {
			return nil, fmt.Errorf("build driver pod %s: %w", n.DriverPod, err)
		}
	}
	template, err := b.executorTemplate(s, n, c)
	if err != nil {
		return nil, fmt.Errorf("build executor pod template: %w", err)
	}
	tmplYAML, err := podYAML(template)
	if err != nil {
		return nil, fmt.Errorf("encode executor pod template: %w", err)
	}
	objs := &Set{
		Driver:    driver,
		ConfigMap: m.configMap(r, n, c, tmplYAML, metricsFiles(s)),
		Service:   service(r, n, c),

		ExecutorTemplate: template,
		Conf:             c,
	}
	if objs.Extra, err = exposed(s, m.ui(s), r, n, c); err != nil {
		return nil, err
	}
	if objs.PodGroup, err = podGroup(s, r, n, c, driver); err != nil {
		return nil, fmt.Errorf("build pod group %s: %w", n.PodGroup, err)
	}
	if objs.Workload, err = workload(s, r, n, c, driver, template); err != nil {
		return nil, fmt.Errorf("build Kueue workload %s: %w", n.Workload, err)
	}
	if err := checkMetadata(objs); err != nil {
		return nil, err
	}
	return objs, nil
}

// OwnedBy makes the created driver pod the controller of the run's
// ConfigMap and Service, as spark-submit does, and of the rest (the
// PodGroup, the Extra objects), so deleting the driver (or, through its
// owner, the Workflow) deletes them. The driver must carry its UID, so
// call it with the pod the API server returned.
func OwnedBy(objs *Set, driver *corev1.Pod) {
	if objs == nil || driver == nil {
		return
	}
	ref := metav1.OwnerReference{
		APIVersion: "v1",
		Kind:       "Pod",
		Name:       driver.Name,
		UID:        driver.UID,
		Controller: ptr.To(true),
	}
	if objs.ConfigMap != nil {
		objs.ConfigMap.OwnerReferences = []metav1.OwnerReference{ref}
	}
	if objs.Service != nil {
		objs.Service.OwnerReferences = []metav1.OwnerReference{ref}
	}
	for _, o := range objs.Extra {
		o.SetOwnerReferences([]metav1.OwnerReference{ref})
	}
	if objs.PodGroup != nil {
		objs.PodGroup.SetOwnerReferences([]metav1.OwnerReference{ref})
	}
}

// checkRun rejects a run the builder cannot name or label.
func checkRun(s *spec.SparkApplicationSpec, r Run) error {
	var errs []error
	if r.Workflow.Name == "" || r.Workflow.Namespace == "" || r.Workflow.UID == "" {
		errs = append(errs, fmt.Errorf("run: workflow name, namespace and uid are all required (got %q, %q, %q)", r.Workflow.Name, r.Workflow.Namespace, r.Workflow.UID))
	}
	if r.NodeID == "" {
		errs = append(errs, errors.New("run: node id is required"))
	}
	for _, msg := range validation.IsValidLabelValue(r.TemplateKey) {
		errs = append(errs, fmt.Errorf("run: template key %q: %s", r.TemplateKey, msg))
	}
	if r.TemplateKey == "" {
		errs = append(errs, errors.New("run: template key is required"))
	}
	if s.Executor.MemoryLimit != nil && *s.Executor.MemoryLimit != "" {
		errs = append(errs, errors.New("executor.memoryLimit cannot be honoured: Spark sets each executor's memory limit to its memory plus overhead, overriding the executor pod template; raise executor.memoryOverhead instead"))
	}
	return errors.Join(errs...)
}

// checkConf rejects conf values Spark would refuse at submission.
func checkConf(c map[string]string) error {
	var errs []error
	for _, k := range []string{spark.ConfDriverPort, spark.ConfBlockManagerPort, spark.ConfBlockManagerPortAll, spark.ConfUIPort} {
		if v, ok := c[k]; ok && confvalue.Check(k, v) == nil && intOr(v, -1) == -1 {
			errs = append(errs, fmt.Errorf("%s %q: want a port number", k, v))
		}
	}
	// The values sparkplug reads, as Spark reads them (validation refuses
	// the body's; these are the effective conf's, fields included).
	for _, e := range confvalue.Problems(c) {
		errs = append(errs, e)
	}
	for _, prefix := range []string{spark.ConfDriverLabelPrefix, spark.ConfExecutorLabelPrefix} {
		for _, k := range slices.Sorted(maps.Keys(prefixed(c, prefix))) {
			if spark.SparkOwnLabel(k) {
				errs = append(errs, fmt.Errorf("%s%s: label %s is Spark's own (it selects the application's pods); choose another key", prefix, k, k))
			}
		}
	}
	// The executors' metadata comes from the conf; the driver's and the
	// Service's are checked on the objects.
	for _, prefix := range []string{spark.ConfExecutorLabelPrefix, spark.ConfExecutorAnnotationPrefix} {
		for _, k := range slices.Sorted(maps.Keys(prefixed(c, prefix))) {
			if strings.HasPrefix(k, argoPrefix) {
				errs = append(errs, fmt.Errorf("%s%s: keys under %s are Argo's own; Argo's controller would take the executors for workflow pods", prefix, k, argoPrefix))
			}
		}
	}
	return errors.Join(errs...)
}

// argoPrefix is the domain of Argo's labels and annotations: Argo's
// controller selects its own pods by them, so Spark pods must never carry
// them.
const argoPrefix = spark.ArgoDomain + "/"

// checkMetadata rejects labels and annotations the API server would refuse
// or that would make Argo mistake a Spark object for one of its own.
func checkMetadata(objs *Set) error {
	var errs []error
	check := func(kind string, m metav1.ObjectMeta) {
		for _, k := range slices.Sorted(maps.Keys(m.Labels)) {
			for _, msg := range validation.IsQualifiedName(k) {
				errs = append(errs, fmt.Errorf("%s label key %q: %s", kind, k, msg))
			}
			for _, msg := range validation.IsValidLabelValue(m.Labels[k]) {
				errs = append(errs, fmt.Errorf("%s label %s=%q: %s", kind, k, m.Labels[k], msg))
			}
		}
		for _, k := range slices.Sorted(maps.Keys(m.Annotations)) {
			for _, msg := range validation.IsQualifiedName(k) {
				errs = append(errs, fmt.Errorf("%s annotation key %q: %s", kind, k, msg))
			}
		}
		for _, k := range slices.Concat(slices.Collect(maps.Keys(m.Labels)), slices.Collect(maps.Keys(m.Annotations))) {
			if strings.HasPrefix(k, argoPrefix) {
				errs = append(errs, fmt.Errorf("%s metadata key %s: keys under %s are Argo's own; Argo's controller would take the object for a workflow pod", kind, k, argoPrefix))
			}
		}
	}
	check("driver pod", objs.Driver.ObjectMeta)
	check("configmap", objs.ConfigMap.ObjectMeta)
	check("service", objs.Service.ObjectMeta)
	for _, o := range objs.Extra {
		check(strings.ToLower(o.GetObjectKind().GroupVersionKind().Kind)+" "+o.GetName(), metav1.ObjectMeta{Labels: o.GetLabels(), Annotations: o.GetAnnotations()})
	}
	if pg := objs.PodGroup; pg != nil {
		check("podgroup "+pg.GetName(), metav1.ObjectMeta{Labels: pg.GetLabels(), Annotations: pg.GetAnnotations()})
	}
	return errors.Join(errs...)
}

// WorkflowOwner is the driver's ownerReference (and a stopped driver's
// tombstone's): deleting the Workflow deletes the driver, and through it
// the rest.
func WorkflowOwner(w spark.WorkflowRef) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: "argoproj.io/v1alpha1",
		Kind:       "Workflow",
		Name:       w.Name,
		UID:        types.UID(w.UID),
		Controller: ptr.To(true),
	}
}

// Tombstone is the ConfigMap that records a driver sparkplug stopped (a
// time limit, a driver that cannot start), created before the pod is
// deleted: owned by the Workflow, so the run is remembered once the pod
// and what it owns are gone, with the driver's run labels and
// annotations and ann, what happened. It is a ConfigMap of its own, not
// the driver's ConfigMap re-owned, so sparkplug needs no right to change
// a ConfigMap; a stopped driver's ConfigMap goes with it.
func Tombstone(driver *corev1.Pod, wf spark.WorkflowRef, ann map[string]string) *corev1.ConfigMap {
	labels := map[string]string{}
	for _, k := range append(slices.Clone(sparkplugLabelKeys), spark.LabelAppSelector) {
		if v, ok := driver.Labels[k]; ok {
			labels[k] = v
		}
	}
	annotations := maps.Clone(ann)
	for _, k := range []string{spark.AnnotationNodeID, spark.AnnotationWorkflowName, spark.AnnotationIncarnation, spark.AnnotationNameKey} {
		if v, ok := driver.Annotations[k]; ok {
			annotations[k] = v
		}
	}
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            TombstoneName(driver.Name),
			Namespace:       driver.Namespace,
			Labels:          labels,
			Annotations:     annotations,
			OwnerReferences: []metav1.OwnerReference{WorkflowOwner(wf)},
		},
		Immutable: ptr.To(true),
	}
}

// sparkplugAnnotations are the annotations on everything a run creates.
func sparkplugAnnotations(r Run) map[string]string {
	ann := map[string]string{
		spark.AnnotationNodeID:       r.NodeID,
		spark.AnnotationWorkflowName: r.Workflow.Name,
	}
	if r.Incarnation != "" {
		ann[spark.AnnotationIncarnation] = r.Incarnation
	}
	if r.NameKey != "" {
		ann[spark.AnnotationNameKey] = r.NameKey
	}
	return ann
}

// configMap holds spark.properties, mounted at /opt/spark/conf in the
// driver, the executor pod template, mounted at /opt/spark/pod-template,
// and the monitoring files (metricsFiles), mounted at /etc/metrics/conf in
// the driver and the executors. It is immutable, as spark-submit makes it.
func configMap(r Run, n Names, c map[string]string, executorTemplate string, files map[string]string) *corev1.ConfigMap {
	labels := sparkplugLabels(r)
	labels[spark.LabelAppSelector] = n.AppID
	data := map[string]string{
		spark.PropertiesFile:         renderProperties(c, "Spark properties of "+n.AppID+" ("+n.DriverPod+"), written by sparkplug"),
		spark.ExecutorPodTemplateKey: executorTemplate,
	}
	maps.Copy(data, files)
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        n.ConfigMap,
			Namespace:   r.Workflow.Namespace,
			Labels:      labels,
			Annotations: sparkplugAnnotations(r),
		},
		Immutable: ptr.To(true),
		Data:      data,
	}
}

// service is Spark's headless driver Service: executors reach
// spark.driver.host (<service>.<namespace>.svc) through it.
func service(r Run, n Names, c map[string]string) *corev1.Service {
	labels := prefixed(c, spark.ConfDriverServiceLabelPrefix)
	maps.Copy(labels, sparkplugLabels(r))
	labels[spark.LabelAppSelector] = n.AppID
	annotations := prefixed(c, spark.ConfDriverServiceAnnotationPrefix)
	maps.Copy(annotations, sparkplugAnnotations(r))
	port := func(name string, p int) corev1.ServicePort {
		return corev1.ServicePort{Name: name, Port: int32(p), TargetPort: intstr.FromInt32(int32(p))}
	}
	return &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        n.Service,
			Namespace:   r.Workflow.Namespace,
			Labels:      labels,
			Annotations: annotations,
		},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			// The application id is unique, so these two select exactly
			// this run's driver, as Spark's selector (all the driver's
			// Spark labels) does.
			Selector: map[string]string{
				spark.LabelAppSelector: n.AppID,
				spark.LabelRole:        spark.RoleDriver,
			},
			Ports: []corev1.ServicePort{
				port(spark.DriverPortName, driverPort(c)),
				port(spark.BlockManagerPortName, blockManagerPort(c)),
				port(spark.UIPortName, uiPort(c)),
			},
		},
	}
}

// podYAML encodes a pod template without the fields a template never has
// (status, creationTimestamp).
func podYAML(p *corev1.Pod) (string, error) {
	raw, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", err
	}
	delete(m, "status")
	if meta, ok := m["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
		if len(meta) == 0 {
			delete(m, "metadata")
		}
	}
	out, err := yaml.Marshal(m)
	if err != nil {
		return "", err
	}
	return string(out), nil
}
