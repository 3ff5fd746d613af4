package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// freePort is a loopback port nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// podEnv resolves a container's env as the kubelet would for pod.
func podEnv(pod *corev1.Pod) func(string) string {
	env := map[string]string{}
	for _, e := range pod.Spec.Containers[len(pod.Spec.Containers)-1].Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
			env[e.Name] = pod.Name
		}
	}
	return func(k string) string { return env[k] }
}

// The driver creates its executor pods through the API (owned by its
// pod, with its template), and the executors those pods would run
// register with it; it then stops them, deletes them with one
// deletecollection, and exits with the code asked for.
func TestDriverRunsItsExecutors(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	tmpl := filepath.Join(dir, "template.yaml")
	if err := os.WriteFile(tmpl, []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  labels:\n    from: template\nspec:\n  containers:\n  - name: spark-kubernetes-executor\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	props := filepath.Join(dir, "spark.properties")
	if err := os.WriteFile(props, []byte(fmt.Sprintf(`spark.app.id=spark-1
spark.kubernetes.namespace=ns
spark.kubernetes.driver.pod.name=app-driver
spark.kubernetes.executor.podNamePrefix=app
spark.kubernetes.container.image=e2e.sparkplug.test/spark\:standin
spark.kubernetes.executor.podTemplateFile=%s
spark.executor.instances=2
spark.driver.host=127.0.0.1
spark.driver.port=%d
`, tmpl, port)), 0o644); err != nil {
		t.Fatal(err)
	}
	driverPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app-driver", Namespace: "ns", UID: "driver-uid"}, Spec: corev1.PodSpec{ServiceAccountName: "spark"}}
	client := fake.NewClientset(driverPod)
	var executors sync.WaitGroup
	codes := make(chan int, 2)
	ctx := t.Context()
	client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pod := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		if pod.OwnerReferences[0].UID != driverPod.UID || pod.Labels["from"] != "template" || pod.Spec.ServiceAccountName != "spark" {
			t.Errorf("executor pod %+v", pod)
		}
		executors.Add(1)
		go func() { // the kubelet runs it
			defer executors.Done()
			codes <- runExecutor(ctx, podEnv(pod), slog.New(slog.NewTextHandler(io.Discard, nil)))
		}()
		return false, nil, nil
	})
	var stdout, logs bytes.Buffer
	getenv := func(k string) string {
		if k == spark.EnvDriverBindAddress {
			return "127.0.0.1"
		}
		return ""
	}
	code := runDriver(ctx, []string{"--properties-file", props, "--class", "Pi", "spark-internal", "1000", "--exit=3", "--min-executors=2", "--message=done"},
		getenv, func() (kubernetes.Interface, error) { return client, nil }, &stdout, slog.New(slog.NewTextHandler(&logs, nil)))
	if code != 3 || stdout.String() != "done\n" {
		t.Errorf("exit code %d, stdout %q, want 3 and the message; log:\n%s", code, stdout.String(), logs.String())
	}
	done := make(chan struct{})
	go func() { executors.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the executors did not exit")
	}
	close(codes)
	n := 0
	for c := range codes {
		n++
		if c != 0 {
			t.Errorf("an executor exited %d, want 0 (stopped by its driver)", c)
		}
	}
	var created, deleted int
	for _, a := range client.Actions() {
		switch {
		case a.GetVerb() == "create" && a.GetResource().Resource == "pods":
			created++
		case a.GetVerb() == "delete-collection":
			sel := a.(k8stesting.DeleteCollectionAction).GetListRestrictions().Labels.String()
			if a.GetNamespace() != "ns" || sel != "spark-app-selector=spark-1,spark-role=executor" {
				t.Errorf("deletecollection in %s of %q", a.GetNamespace(), sel)
			}
			deleted++
		}
	}
	if created != 2 || n != 2 || deleted != 1 {
		t.Errorf("%d executor pods created, %d ran, %d deletecollections; want 2, 2, 1", created, n, deleted)
	}
}

// Too few executors within the waiting time fail the driver, which still
// deletes the ones it asked for.
func TestDriverFailsWithoutItsExecutors(t *testing.T) {
	props := filepath.Join(t.TempDir(), "spark.properties")
	if err := os.WriteFile(props, []byte("spark.app.id=spark-1\nspark.kubernetes.namespace=ns\nspark.kubernetes.executor.podNamePrefix=app\n"+
		"spark.kubernetes.container.image=img\nspark.executor.instances=1\nspark.driver.bindAddress=127.0.0.1\n"+
		"spark.driver.port="+strconv.Itoa(freePort(t))+"\nspark.scheduler.maxRegisteredResourcesWaitingTime=200ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	client := fake.NewClientset()
	var logs bytes.Buffer
	code := runDriver(t.Context(), []string{"--properties-file", props, "x.jar", "--min-executors=1"},
		func(string) string { return "" }, func() (kubernetes.Interface, error) { return client, nil }, io.Discard, slog.New(slog.NewTextHandler(&logs, nil)))
	if code != 1 || !bytes.Contains(logs.Bytes(), []byte("only 0 of 1 executors registered")) {
		t.Errorf("exit code %d, want 1; log:\n%s", code, logs.String())
	}
	if a := client.Actions(); len(a) != 2 || a[1].GetVerb() != "delete-collection" {
		t.Errorf("actions %v, want a create and a deletecollection", a)
	}
}

// SIGTERM ends the driver with 143, as the JVM, after deleting its
// executors.
func TestDriverTerminated(t *testing.T) {
	props := filepath.Join(t.TempDir(), "spark.properties")
	if err := os.WriteFile(props, []byte("spark.app.id=spark-1\nspark.kubernetes.namespace=ns\nspark.executor.instances=0\n"+
		"spark.driver.bindAddress=127.0.0.1\nspark.driver.port="+strconv.Itoa(freePort(t))+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	client := fake.NewClientset()
	code := runDriver(ctx, []string{"--properties-file", props, "x.jar", "--sleep=1h"},
		func(string) string { return "" }, func() (kubernetes.Interface, error) { return client, nil }, io.Discard, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if a := client.Actions(); code != 143 || len(a) != 1 || a[0].GetVerb() != "delete-collection" {
		t.Errorf("exit code %d, actions %v; want 143 after a deletecollection", code, a)
	}
}
