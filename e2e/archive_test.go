//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/e2e/argo"
	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// The S3 server's root credentials (a test-only server on loopback).
const (
	s3Access = "sparkplug-e2e"
	s3Secret = "sparkplug-e2e-secret"
	s3Bucket = "argo-artifacts"
)

// serversBin is where hack/servers.sh builds argo and versitygw.
func serversBin(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("bash", filepath.Join(env.RepoRoot, "hack", "servers.sh"), "bindir").Output()
	if err != nil {
		t.Fatalf("hack/servers.sh bindir: %v", err)
	}
	dir := strings.TrimSpace(string(out))
	for _, b := range []string{"argo", "versitygw"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			t.Fatalf("%s is not built (make e2e builds it with hack/servers.sh build): %v", b, err)
		}
	}
	return dir
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startS3 runs versitygw, an S3-compatible server, on loopback, with the
// bucket the workflow's artifact repository names.
func startS3(t *testing.T, bin string) (endpoint string, client *minio.Client) {
	t.Helper()
	port := freePort(t)
	endpoint = fmt.Sprintf("127.0.0.1:%d", port)
	p, err := env.Cluster.StartProcess("versitygw", filepath.Join(bin, "versitygw"),
		[]string{"--port", endpoint, "--access", s3Access, "--secret", s3Secret, "posix", t.TempDir()}, nil, "")
	if err != nil {
		t.Fatalf("start versitygw: %v", err)
	}
	t.Cleanup(func() { _ = p.Stop() })
	client, err = minio.New(endpoint, &minio.Options{Creds: credentials.NewStaticV4(s3Access, s3Secret, "")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		err = client.MakeBucket(ctx, s3Bucket, minio.MakeBucketOptions{})
		if err == nil {
			return endpoint, client
		}
		select {
		case <-ctx.Done():
			t.Fatalf("make bucket %s on versitygw: %v\n%s", s3Bucket, err, p.LogTail(20))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// startArgoServer runs the real argo server (its API; this build has no
// web pages) over the e2e cluster, as the Argo UI's backend.
func startArgoServer(t *testing.T, bin string) string {
	t.Helper()
	port := freePort(t)
	p, err := env.Cluster.StartProcess("argo-server", filepath.Join(bin, "argo"),
		[]string{"server", "--kubeconfig", env.Kubeconfig(), "--auth-mode=server", "--secure=false",
			// The controller's namespace, where its ConfigMap is.
			fmt.Sprintf("--port=%d", port), "--namespaced", "--namespace=" + argo.Namespace, "--managed-namespace=" + env.Namespace},
		nil, "")
	if err != nil {
		t.Fatalf("start argo server: %v", err)
	}
	t.Cleanup(func() { _ = p.Stop() })
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/api/v1/version")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("argo server did not answer: %v\n%s", err, p.LogTail(30))
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// A step with sparkplug.archiveLogs stores its driver's log in the
// workflow's S3 artifact repository once the driver ends, and reports it as
// the node's output artifact driver-log; the real argo server's artifact
// endpoint, the one the Argo UI opens, returns that log, after the driver
// pod is gone. The plugin reads the credentials Secret the repository names
// through a Role on that name only.
func TestDriverLogIsArchivedAndServedByArgoServer(t *testing.T) {
	parallel(t)
	bin := serversBin(t)
	endpoint, s3 := startS3(t, bin)
	ctx := context.Background()
	ns := env.Namespace
	suffix := fmt.Sprintf("%d", time.Now().UnixNano()%100000)
	secretName, cmName := "e2e-s3-"+suffix, "e2e-artifact-repositories-"+suffix

	if _, err := env.Kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secretName},
		StringData: map[string]string{"accesskey": s3Access, "secretkey": s3Secret},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	repo := fmt.Sprintf(`s3:
  bucket: %s
  endpoint: %s
  insecure: true
  accessKeySecret: {name: %s, key: accesskey}
  secretKeySecret: {name: %s, key: secretkey}
`, s3Bucket, endpoint, secretName, secretName)
	if _, err := env.Kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: cmName},
		Data:       map[string]string{"e2e": repo},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// What the chart's logArchive.secretNames makes: get on that Secret.
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "sparkplug-log-archive-" + suffix},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{secretName}, Verbs: []string{"get"}}}}
	if _, err := env.Kube.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Kube.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: env.SparkplugServiceAccount(), Namespace: ns}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		bg := context.Background()
		_ = env.Kube.RbacV1().RoleBindings(ns).Delete(bg, role.Name, metav1.DeleteOptions{})
		_ = env.Kube.RbacV1().Roles(ns).Delete(bg, role.Name, metav1.DeleteOptions{})
		_ = env.Kube.CoreV1().ConfigMaps(ns).Delete(bg, cmName, metav1.DeleteOptions{})
		_ = env.Kube.CoreV1().Secrets(ns).Delete(bg, secretName, metav1.DeleteOptions{})
	})

	wfYAML := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: archive-
spec:
  entrypoint: main
  artifactRepositoryRef: {configMap: %s, key: e2e}
  templates:
  - name: main
    plugin:
      spark:%s
`, cmName, sparkBody(8, "sparkplug: {archiveLogs: true}", driverLine, executorLine))

	var node wfv1.NodeStatus
	var driver corev1.Pod
	w := Given(t).
		Workflow(wfYAML).
		Simulate(sim.Fail(time.Second, 3, "java.lang.IllegalStateException: input path does not exist")).
		When().
		SubmitWorkflow().
		WaitForWorkflow(framework.ToBeFailed)
	w.Then().
		ExpectDrivers(func(t *testing.T, drivers []corev1.Pod) {
			if len(drivers) != 1 {
				t.Fatalf("%d drivers, want 1", len(drivers))
			}
			driver = drivers[0]
		}).
		ExpectPluginNodes(func(t *testing.T, nodes []wfv1.NodeStatus) {
			if len(nodes) != 1 {
				t.Fatalf("%d plugin nodes, want 1", len(nodes))
			}
			node = nodes[0]
			if node.Phase != wfv1.NodeFailed || !strings.HasPrefix(node.Message, "FAILED: driver exited 3") || strings.Contains(node.Message, "not archived") {
				t.Errorf("node %s %q, want Failed \"FAILED: driver exited 3 ...\" with its log archived", node.Phase, node.Message)
			}
		})
	if t.Failed() {
		return
	}
	var art *wfv1.Artifact
	if node.Outputs != nil {
		art = node.Outputs.GetArtifactByName("driver-log")
	}
	if art == nil || art.S3 == nil {
		t.Fatalf("node outputs %+v: no S3 artifact driver-log", node.Outputs)
	}
	wantKey := w.Workflow().Name + "/" + driver.Name + "/driver.log"
	if art.S3.Key != wantKey || art.S3.Bucket != s3Bucket || art.S3.AccessKeySecret == nil || art.S3.AccessKeySecret.Name != secretName {
		t.Errorf("artifact %+v, want key %s in bucket %s with the repository's Secret names", art.S3, wantKey, s3Bucket)
	}
	// Read afresh: the ExpectDrivers snapshot may predate the annotation.
	if p, err := env.Kube.CoreV1().Pods(ns).Get(ctx, driver.Name, metav1.GetOptions{}); err != nil || p.Annotations[spark.AnnotationDriverLog] != wantKey {
		t.Errorf("driver pod does not record the archived key %s: %v", wantKey, err)
	}

	// In S3: the driver's log as the kubelet (KWOK) served it.
	obj, err := s3.GetObject(ctx, s3Bucket, art.S3.Key, minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := io.ReadAll(obj)
	if err != nil {
		t.Fatalf("read s3://%s/%s: %v", s3Bucket, art.S3.Key, err)
	}
	for _, want := range []string{"Submitted application", driver.Labels[spark.LabelAppSelector], "input path does not exist", "exiting with code 3"} {
		if !strings.Contains(string(stored), want) {
			t.Errorf("stored log lacks %q:\n%s", want, stored)
		}
	}

	// The driver goes (as timeToLiveSeconds or the workflow's deletion
	// would take it); the log stays, and argo server serves it.
	if err := env.Kube.CoreV1().Pods(ns).Delete(ctx, driver.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	base := startArgoServer(t, bin)
	for _, path := range []string{
		fmt.Sprintf("/artifact-files/%s/workflows/%s/%s/outputs/driver-log", ns, w.Workflow().Name, node.ID),
		fmt.Sprintf("/artifacts/%s/%s/%s/driver-log", ns, w.Workflow().Name, node.ID),
	} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(body) != string(stored) {
			t.Errorf("GET %s: %s, %d bytes; want 200 and the stored log (%d bytes):\n%s", path, resp.Status, len(body), len(stored), body)
		}
	}
}
