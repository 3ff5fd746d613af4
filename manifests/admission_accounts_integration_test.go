//go:build integration

package manifests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// The plugin's token Secret, as rbac.yaml makes it and Argo mounts it.
const pluginToken = serviceAccount + ".service-account-token"

// agentPod is the pod Argo's workflow-controller v3.7 makes for a
// workflow's executor plugins (workflow/controller/agent.go): the plugin's
// container as plugin.yaml has it, with Argo's mounts (its token Secret
// under a random volume name, /var/run/argo by subPath), Argo's init and
// main containers with the workflow account's token, and Argo's labels.
func agentPod(t *testing.T, workflow string) *corev1.Pod {
	t.Helper()
	plugin := loadPlugin(t).Spec.Sidecar.Container.DeepCopy()
	plugin.VolumeMounts = append(plugin.VolumeMounts,
		corev1.VolumeMount{Name: "var-run-argo", MountPath: "/var/run/argo", ReadOnly: true, SubPath: plugin.Name},
		corev1.VolumeMount{Name: "kube-api-access-q7x2k", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true})
	argo := func(name string) corev1.Container {
		return corev1.Container{Name: name, Image: "quay.io/argoproj/argoexec:v3.7.18", Command: []string{"argoexec"}, Args: []string{"agent", name},
			VolumeMounts: []corev1.VolumeMount{{Name: "var-run-argo", MountPath: "/var/run/argo"},
				{Name: "kube-api-access-m3k9d", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}}}
	}
	secret := func(name, secret string) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: workflow + "-1340600742-agent",
			Labels: map[string]string{"workflows.argoproj.io/workflow": workflow, "workflows.argoproj.io/completed": "false",
				"workflows.argoproj.io/component": "agent"},
			Annotations: map[string]string{"kubectl.kubernetes.io/default-container": "main"},
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                corev1.RestartPolicyOnFailure,
			ServiceAccountName:           "default",
			AutomountServiceAccountToken: ptr.To(false),
			Volumes: []corev1.Volume{secret("kube-api-access-q7x2k", pluginToken),
				{Name: "var-run-argo", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				secret("kube-api-access-m3k9d", "default.service-account-token")},
			InitContainers: []corev1.Container{argo("init")},
			Containers:     []corev1.Container{*plugin, argo("main")},
		},
	}
}

// grantEdit binds the ClusterRole edit in ns to user: whatever the policy
// refuses below, RBAC allowed.
func grantEdit(t *testing.T, ns, user string) {
	t.Helper()
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{GenerateName: "edit-"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}
	if _, err := testCluster.Client.RbacV1().RoleBindings(ns).Create(t.Context(), rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestAdmissionPolicyGuardsAccountsAndRuns installs manifests/ and
// admission/ and acts, with RBAC's edit granted to each, as a Spark
// driver's ServiceAccount, Argo's workflow-controller (argo/argo) and the
// plugin's ServiceAccount. Refused: the driver's writes to the executor
// plugin ConfigMap, pods that run as the plugin's account or mount its
// token Secret (a step pod of Argo's among them, and an agent pod whose
// plugin container a podSpecPatch changed), a driver pod or a tombstone
// with a run's label made by anyone but sparkplug, the label added to a
// pod. Allowed: Spark's executor pods and executor ConfigMap made and
// labelled by the driver, sparkplug's driver and tombstone, Argo's agent
// pod with the plugin's token in the plugin's container.
func TestAdmissionPolicyGuardsAccountsAndRuns(t *testing.T) {
	const ns = "guarded"
	createNamespace(t, ns)
	installConfined(t, ns, "MANIFESTS", "MANIFESTS/spark-submit")
	guardsAccountsAndRuns(t, ns)
}

// The chart's policy, rendered by helm for a release in sparkplug-system
// with the job namespace guarded-chart, with that release's names and
// bound in its namespaces, holds as manifests/admission's does.
func TestChartAdmissionPolicyGuardsAccountsAndRuns(t *testing.T) {
	const ns = "guarded-chart"
	createNamespace(t, ns)
	// The pinned helm, as the chart tests take it; built when missing.
	helm := os.Getenv("SPARKPLUG_HELM")
	if helm == "" {
		command(t, "bash", "../hack/helm.sh", "build")
		helm = filepath.Join(strings.TrimSpace(string(command(t, "bash", "../hack/helm.sh", "bindir"))), "helm")
	}
	policy := command(t, helm, "template", "sparkplug", "chart/sparkplug", "--namespace", "sparkplug-system",
		"--set", "jobNamespaces={"+ns+"}", "--api-versions", "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy",
		"--show-only", "templates/admission-policy.yaml")
	installPolicy(t, ns, "MANIFESTS", "MANIFESTS/spark-submit", policy)
	guardsAccountsAndRuns(t, ns)
}

// command runs a program and returns its stdout.
func command(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), name, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(t.TempDir(), "none"), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_CACHE_HOME="+t.TempDir())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// guardsAccountsAndRuns acts in ns, where the plugin is installed and an
// admission policy applied, as a driver, Argo's controller and the plugin.
func guardsAccountsAndRuns(t *testing.T, ns string) {
	ctx := t.Context()
	driverUser := "system:serviceaccount:" + ns + ":spark"
	grantEdit(t, ns, driverUser)
	grantEdit(t, ns, "system:serviceaccount:argo:argo")
	driver, argo, plugin := impersonateAs(t, ns, "spark"), impersonateAs(t, "argo", "argo"), impersonate(t, ns)
	patch := []byte(`{"metadata":{"annotations":{"evil":"yes"}}}`)

	// The policy takes effect once the API server has loaded it.
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := driver.CoreV1().ConfigMaps(ns).Patch(ctx, serviceAccount, types.MergePatchType, patch, metav1.PatchOptions{})
		if err == nil {
			undo := []byte(`{"metadata":{"annotations":{"evil":null}}}`)
			_, err = testCluster.Client.CoreV1().ConfigMaps(ns).Patch(ctx, serviceAccount, types.MergePatchType, undo, metav1.PatchOptions{})
			return false, err
		}
		return strings.Contains(err.Error(), "only the installer may"), nil
	})
	if err != nil {
		t.Fatalf("the policy never refused the driver's patch of the executor plugin ConfigMap: %v", err)
	}

	refused := func(what string, err error, says string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: %v; want refused by the policy saying %q", what, err, says)
		}
	}
	allowed := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v; want allowed", what, err)
		}
	}
	pod := func(name string, labels map[string]string, mutate func(*corev1.PodSpec)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
		if mutate != nil {
			mutate(&p.Spec)
		}
		return p
	}
	create := func(c kubernetes.Interface, p *corev1.Pod) error {
		_, err := c.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		return err
	}
	createCM := func(c kubernetes.Interface, name string, labels map[string]string) error {
		_, err := c.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
		return err
	}
	mountToken := func(s *corev1.PodSpec) {
		s.Volumes = []corev1.Volume{{Name: "t", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: pluginToken}}}}
		s.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "t", MountPath: "/t"}}
	}
	run := map[string]string{spark.LabelWorkflowUID: "wf-uid", spark.LabelManagedBy: spark.ManagedByValue, spark.LabelAppSelector: "spark-1"}
	with := func(m map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for k, v := range m {
			out[k] = v
		}
		return out
	}

	// 2. The executor plugin ConfigMap.
	refused("the driver's patch of the executor plugin ConfigMap", func() error {
		_, err := driver.CoreV1().ConfigMaps(ns).Patch(ctx, serviceAccount, types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	}(), "only the installer may")
	refused("the driver's delete of the executor plugin ConfigMap",
		driver.CoreV1().ConfigMaps(ns).Delete(ctx, serviceAccount, metav1.DeleteOptions{}), "only the installer may")
	refused("the driver's delete of ConfigMaps by the executor plugin label", driver.CoreV1().ConfigMaps(ns).DeleteCollection(ctx, metav1.DeleteOptions{},
		metav1.ListOptions{LabelSelector: "workflows.argoproj.io/configmap-type=ExecutorPlugin"}), "only the installer may")
	if _, err := testCluster.Client.CoreV1().ConfigMaps(ns).Get(ctx, serviceAccount, metav1.GetOptions{}); err != nil {
		t.Errorf("the executor plugin ConfigMap after the driver's deletes: %v; want it there", err)
	}
	refused("a second executor plugin ConfigMap by the driver",
		createCM(driver, "evil-executor-plugin", map[string]string{"workflows.argoproj.io/configmap-type": "ExecutorPlugin"}), "only the installer may")

	// 3. Protected accounts and tokens.
	refused("a pod running as the plugin's ServiceAccount", create(driver, pod("as-plugin", nil, func(s *corev1.PodSpec) {
		s.ServiceAccountName = serviceAccount
	})), "no pod may run as ServiceAccount spark-executor-plugin")
	refused("a pod mounting the plugin's token Secret", create(driver, pod("token-mount", nil, mountToken)), "no pod may mount or read the token")
	refused("a pod reading the plugin's token through env", create(driver, pod("token-env", nil, func(s *corev1.PodSpec) {
		s.Containers[0].EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: pluginToken}}}}
	})), "no pod may mount or read the token")
	step := pod("wf-1340600742-agent", map[string]string{"workflows.argoproj.io/component": "agent"}, mountToken)
	step.Annotations = map[string]string{"workflows.argoproj.io/node-id": "wf-1340600742-agent"}
	refused("Argo's step pod shaped as an agent, mounting the plugin's token", create(argo, step), "no pod may mount or read the token")
	patched := agentPod(t, "patched")
	patched.Spec.Containers[0].Image = "attacker.example.com/steal:latest"
	refused("an agent pod whose plugin container a podSpecPatch changed", create(argo, patched), "no pod may mount or read the token")
	stolen := agentPod(t, "stolen")
	stolen.Spec.Containers[1].VolumeMounts = append(stolen.Spec.Containers[1].VolumeMounts, corev1.VolumeMount{Name: "kube-api-access-q7x2k", MountPath: "/t"})
	refused("an agent pod whose main container mounts the plugin's token", create(argo, stolen), "no pod may mount or read the token")
	refused("an agent pod made by another account than Argo's controller", create(driver, agentPod(t, "forged")), "no pod may mount or read the token")
	allowed("Argo's agent pod with the plugin's token in the plugin's container", create(argo, agentPod(t, "wf")))

	// 4. A run's identity.
	refused("a driver pod with a run's label made by the driver's account",
		create(driver, pod("forged-driver", with(run, spark.LabelRole, spark.RoleDriver), nil)), "only sparkplug's ServiceAccounts")
	refused("a driver pod with a run's label made by Argo (a step's template labels)",
		create(argo, pod("step-driver", with(run, spark.LabelRole, spark.RoleDriver), nil)), "only sparkplug's ServiceAccounts")
	refused("a tombstone-shaped ConfigMap made by the driver's account",
		createCM(driver, "forged-stopped", run), "only sparkplug's ServiceAccounts")
	allowed("an executor pod made by its driver", create(driver, pod("exec-1", with(run, spark.LabelRole, "executor"), nil)))
	_, err = driver.CoreV1().Pods(ns).Patch(ctx, "exec-1", types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"spark-exec-id":"1"}}}`), metav1.PatchOptions{})
	allowed("the driver labels its executor", err)
	_, err = driver.CoreV1().Pods(ns).Patch(ctx, "exec-1", types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"spark-role":"driver"}}}`), metav1.PatchOptions{})
	refused("an executor relabelled a driver", err, "only sparkplug's ServiceAccounts")
	allowed("the executors' ConfigMap made by their driver", createCM(driver, "spark-exec-a1b2c3-conf-map",
		map[string]string{spark.LabelAppSelector: "spark-1", spark.LabelRole: "executor"}))
	allowed("a plain pod", create(driver, pod("plain", nil, nil)))
	_, err = driver.CoreV1().Pods(ns).Patch(ctx, "plain", types.MergePatchType, []byte(`{"metadata":{"labels":{"`+spark.LabelWorkflowUID+`":"wf-uid"}}}`), metav1.PatchOptions{})
	refused("the run's label added to a pod", err, "only sparkplug's ServiceAccounts")
	allowed("sparkplug's driver pod", create(plugin, pod("driver", with(run, spark.LabelRole, spark.RoleDriver), nil)))
	allowed("sparkplug's tombstone", createCM(plugin, "run-stopped", run))
	allowed("the driver's account deletes sparkplug's driver (deletes are RBAC's)", driver.CoreV1().Pods(ns).Delete(ctx, "driver", metav1.DeleteOptions{}))
}
