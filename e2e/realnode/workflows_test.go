//go:build e2e

package realnode

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"fmt"
	"strings"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	corev1 "k8s.io/api/core/v1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/e2e/images"
	"github.com/sparkplug-io/sparkplug/e2e/node"
)

// workflow is a Workflow on the real node: spec.nodeSelector and
// spec.tolerations, which Argo gives the agent pod (and container steps'
// pods); templates is the YAML list of its templates, indented by 4.
func workflow(name, entrypoint, templates string) string {
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: %s-
spec:
  entrypoint: %s
  nodeSelector: {%s: "true"}
  tolerations: [{key: %s, operator: Equal, value: "true", effect: NoSchedule}]
  templates:
%s`, name, entrypoint, node.LabelKey, node.TaintKey, templates)
}

// sparkBody is the plugin body of a Spark step of image with app args
// args (YAML flow items) and executors executors; its driver and
// executors run on the real node, with small requests (the node has two
// cores) and memory limits (memory plus overhead). Executors may take
// longer than Spark's 30 s to register when the machine is busy (seen
// once with all tests in parallel): the driver waits 90 s. extra is more YAML of
// the body, indented by 10; conf more sparkConf, indented by 12.
func sparkBody(image string, executors int, args, conf, extra string) string {
	tol := fmt.Sprintf(`[{key: %s, operator: Equal, value: "true", effect: NoSchedule}]`, node.TaintKey)
	sel := fmt.Sprintf(`{%s: "true"}`, node.LabelKey)
	return fmt.Sprintf(`      plugin:
        spark:
          type: Scala
          mode: cluster
          image: %s
          sparkVersion: 3.5.3
          mainClass: org.apache.spark.examples.SparkPi
          mainApplicationFile: local:///opt/spark/examples/jars/spark-examples.jar
          arguments: [%s]
          sparkConf:
            spark.kubernetes.driver.request.cores: 50m
            spark.kubernetes.executor.request.cores: 50m
            spark.scheduler.maxRegisteredResourcesWaitingTime: 90s
%s          driver: {cores: 1, memory: 64m, memoryOverhead: 64m, serviceAccount: spark, nodeSelector: %s, tolerations: %s}
          executor: {cores: 1, instances: %d, memory: 64m, memoryOverhead: 64m, nodeSelector: %s, tolerations: %s}
%s`, image, args, conf, sel, tol, executors, sel, tol, extra)
}

// sparkStep is sparkBody with the Spark stand-in's image.
func sparkStep(executors int, args string) string {
	return sparkBody(images.SparkStandInRef, executors, args, "", "")
}

// containerStep is a container template running ./step: it prints words
// and writes them to its output parameter out.
func containerStep(words ...string) string {
	return fmt.Sprintf(`      container:
        image: %s
        command: [/step]
        args: [/tmp/out, %s]
        resources: {requests: {cpu: 10m}}
      outputs:
        parameters:
          - name: out
            valueFrom: {path: /tmp/out}
`, stepImage, strings.Join(quoted(words), ", "))
}

func quoted(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// listAgent selects a workflow's agent pod.
func listAgent(workflow string) metav1.ListOptions {
	return metav1.ListOptions{LabelSelector: "workflows.argoproj.io/component=agent,workflows.argoproj.io/workflow=" + workflow}
}

// submit submits the workflow given; a failed test then prints its agent
// pod's sidecar log, followed while the test ran: Argo deletes the agent
// pod when the workflow ends, and the kubelet its log with it.
func submit(t *testing.T, g *framework.Given) *framework.When {
	t.Helper()
	w := g.When().SubmitWorkflow()
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var log bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		follow(ctx, w.Workflow().Namespace, w.Workflow().Name, func(b []byte) {
			mu.Lock()
			defer mu.Unlock()
			log.Write(b)
		})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		if t.Failed() {
			mu.Lock()
			defer mu.Unlock()
			t.Logf("sidecar log of the agent pod of %s:\n%s", w.Workflow().Name, log.String())
		}
	})
	return w
}

// follow streams the sidecar log of the workflow's agent pod to write
// until ctx is done, waiting for the pod to run.
func follow(ctx context.Context, ns, workflow string, write func([]byte)) {
	for ctx.Err() == nil {
		pods, err := env.Kube.CoreV1().Pods(ns).List(ctx, listAgent(workflow))
		if err == nil && len(pods.Items) > 0 && pods.Items[0].Status.Phase == corev1.PodRunning {
			rc, err := env.Kube.CoreV1().Pods(ns).GetLogs(pods.Items[0].Name,
				&corev1.PodLogOptions{Container: "spark-executor-plugin", Follow: true}).Stream(ctx)
			if err == nil {
				b := make([]byte, 32<<10)
				for {
					n, err := rc.Read(b)
					write(b[:n])
					if err != nil {
						break
					}
				}
				rc.Close()
				return
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}
