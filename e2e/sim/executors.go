package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/sparkplug-io/sparkplug/e2e/sparkconf"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Executors plays the part of running Spark drivers that creates and
// removes executor pods.
type Executors struct {
	client kubernetes.Interface
	skip   func(*corev1.Pod) bool
	log    *slog.Logger
	queue  workqueue.TypedRateLimitingInterface[string]
	pods   cache.Indexer
}

// RunExecutors watches driver pods in every namespace until ctx is done.
// For a driver that runs, it creates the executor pods Spark's executor
// allocator would, as described by the driver's spark.properties; for a
// driver that has ended, it deletes them (as the driver's shutdown hook
// does). Drivers skip names (those a real kubelet runs, whose driver makes
// its own executors) are left alone. It returns once its cache has synced; the work goes on in the
// background.
func RunExecutors(ctx context.Context, client kubernetes.Interface, skip func(*corev1.Pod) bool, log *slog.Logger) (*Executors, error) {
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = labels.Set{spark.LabelRole: spark.RoleDriver}.String()
		}))
	informer := factory.Core().V1().Pods().Informer()
	e := &Executors{
		client: client,
		skip:   skip,
		log:    log,
		queue:  workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		pods:   informer.GetIndexer(),
	}
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			e.queue.Add(key)
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		return nil, fmt.Errorf("watch driver pods: %w", err)
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return nil, errors.New("driver pod cache did not sync")
	}
	go func() {
		<-ctx.Done()
		e.queue.ShutDown()
	}()
	go e.work(ctx)
	return e, nil
}

func (e *Executors) work(ctx context.Context) {
	for {
		key, shutdown := e.queue.Get()
		if shutdown {
			return
		}
		if err := e.sync(ctx, key); err != nil && ctx.Err() == nil {
			e.log.Warn("executor simulation failed, retrying", "driver", key, "error", err.Error())
			e.queue.AddRateLimited(key)
		} else {
			e.queue.Forget(key)
		}
		e.queue.Done(key)
	}
}

func (e *Executors) sync(ctx context.Context, key string) error {
	obj, exists, err := e.pods.GetByKey(key)
	if err != nil || !exists {
		return err // a deleted driver's executors go with it (owner reference)
	}
	driver := obj.(*corev1.Pod)
	switch {
	case driver.DeletionTimestamp != nil, e.skip != nil && e.skip(driver):
		return nil
	case driver.Status.Phase == corev1.PodRunning:
		return e.create(ctx, driver)
	case driver.Status.Phase == corev1.PodSucceeded || driver.Status.Phase == corev1.PodFailed:
		return e.remove(ctx, driver)
	default:
		return nil
	}
}

// create makes sure a running driver has its executor pods.
func (e *Executors) create(ctx context.Context, driver *corev1.Pod) error {
	conf, err := e.properties(ctx, driver)
	if err != nil {
		return err
	}
	pods, err := executorPods(driver, conf)
	if err != nil {
		return err
	}
	for _, pod := range pods {
		_, err := e.client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		switch {
		case apierrors.IsAlreadyExists(err):
		case err != nil:
			return fmt.Errorf("create executor pod %s: %w", pod.Name, err)
		default:
			e.log.Info("created executor", "namespace", pod.Namespace, "pod", pod.Name, "driver", driver.Name)
		}
	}
	return nil
}

// remove deletes the executors of a driver that has ended.
func (e *Executors) remove(ctx context.Context, driver *corev1.Pod) error {
	appID := driver.Labels[spark.LabelAppSelector]
	if appID == "" {
		return nil
	}
	selector := labels.Set{spark.LabelAppSelector: appID, spark.LabelRole: spark.RoleExecutor}.String()
	pods, err := e.client.CoreV1().Pods(driver.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return fmt.Errorf("list executors of %s: %w", driver.Name, err)
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		err := e.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete executor %s: %w", p.Name, err)
		}
		e.log.Info("deleted executor", "namespace", p.Namespace, "pod", p.Name, "driver", driver.Name, "driverPhase", string(driver.Status.Phase))
	}
	return nil
}

// properties reads the driver's spark.properties (spark-defaults.conf in
// client mode) from the ConfigMap mounted at Spark's conf dir.
func (e *Executors) properties(ctx context.Context, driver *corev1.Pod) (map[string]string, error) {
	var cmName string
	for _, v := range driver.Spec.Volumes {
		if v.Name == spark.ConfVolumeName && v.ConfigMap != nil {
			cmName = v.ConfigMap.Name
		}
	}
	if cmName == "" {
		return nil, fmt.Errorf("driver %s/%s mounts no %s volume", driver.Namespace, driver.Name, spark.ConfVolumeName)
	}
	var cm *corev1.ConfigMap
	// The ConfigMap may be created a moment after the pod.
	for attempt := 0; ; attempt++ {
		var err error
		cm, err = e.client.CoreV1().ConfigMaps(driver.Namespace).Get(ctx, cmName, metav1.GetOptions{})
		if err == nil {
			break
		}
		if !apierrors.IsNotFound(err) || attempt == 10 {
			return nil, fmt.Errorf("read %s of driver %s: %w", cmName, driver.Name, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	if text, ok := cm.Data[spark.PropertiesFile]; ok {
		return sparkconf.Load(text)
	}
	// A client-mode driver's conf is spark-submit's spark-defaults.conf.
	return sparkconf.Load(cm.Data[spark.ClientDefaultsFile])
}

// executorPods builds the executor pods Spark's KubernetesClusterSchedulerBackend
// would request for driver: names <podNamePrefix>-exec-<id>, Spark's labels
// and the spark.kubernetes.executor.label.* ones, owned by the driver pod.
// They request no resources, so the fake node's capacity limits drivers only.
func executorPods(driver *corev1.Pod, conf map[string]string) ([]*corev1.Pod, error) {
	n, err := sparkconf.ExecutorCount(conf)
	if err != nil {
		return nil, err
	}
	appID := conf[spark.ConfAppID]
	if appID == "" {
		appID = driver.Labels[spark.LabelAppSelector]
	}
	prefix := conf[spark.ConfExecutorPodNamePrefix]
	if prefix == "" {
		prefix = strings.TrimSuffix(driver.Name, "-driver")
	}
	image := conf[spark.ConfExecutorContainerImage]
	if image == "" {
		image = conf[spark.ConfContainerImage]
	}
	sa := conf[spark.ConfExecutorServiceAccount]
	if sa == "" {
		sa = driver.Spec.ServiceAccountName // Spark 3.1+: executors default to the driver's account
	}
	extraLabels := withPrefix(conf, spark.ConfExecutorLabelPrefix)
	annotations := withPrefix(conf, spark.ConfExecutorAnnotationPrefix)
	pods := make([]*corev1.Pod, 0, n)
	for id := 1; id <= n; id++ {
		execID := strconv.Itoa(id)
		name := prefix + "-exec-" + execID
		pods = append(pods, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name:      name,
				Namespace: driver.Namespace,
				Labels: merged(extraLabels, map[string]string{
					spark.LabelAppSelector:          appID,
					spark.LabelAppName:              driver.Labels[spark.LabelAppName],
					spark.LabelRole:                 spark.RoleExecutor,
					spark.LabelExecID:               execID,
					"spark-exec-resourceprofile-id": "0",
				}),
				Annotations:     annotations,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(driver, corev1.SchemeGroupVersion.WithKind("Pod"))},
			},
			Spec: corev1.PodSpec{
				Hostname:           name,
				RestartPolicy:      corev1.RestartPolicyNever,
				ServiceAccountName: sa,
				Containers: []corev1.Container{{
					Name:  spark.ExecutorContainerName,
					Image: image,
					Args:  []string{"executor"},
					Env: []corev1.EnvVar{
						{Name: "SPARK_EXECUTOR_ID", Value: execID},
						{Name: "SPARK_APPLICATION_ID", Value: appID},
						{Name: "SPARK_DRIVER_URL", Value: fmt.Sprintf("spark://CoarseGrainedScheduler@%s:%s", conf[spark.ConfDriverHost], conf[spark.ConfDriverPort])},
						{Name: "SPARK_EXECUTOR_CORES", Value: conf[spark.ConfExecutorCores]},
						{Name: "SPARK_EXECUTOR_MEMORY", Value: conf[spark.ConfExecutorMemory]},
					},
				}},
			},
		})
	}
	return pods, nil
}

// withPrefix returns the conf entries under prefix, keyed by the rest.
func withPrefix(conf map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range conf {
		if rest, ok := strings.CutPrefix(k, prefix); ok && rest != "" {
			out[rest] = v
		}
	}
	return out
}
