package framework

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

const install = `apiVersion: v1
kind: ConfigMap
metadata:
  name: spark-executor-plugin
  labels:
    workflows.argoproj.io/configmap-type: ExecutorPlugin
data:
  sidecar.automountServiceAccountToken: "true"
  sidecar.container: |
    name: spark-executor-plugin
    args: [serve, --addr=127.0.0.1:4355]
    ports: [{containerPort: 4355}]
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: spark-executor-plugin
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: reader
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: elsewhere
  namespace: argo
`

func TestPlaceInstall(t *testing.T) {
	inst, err := placeInstall([]byte(install), "e2e")
	if err != nil {
		t.Fatal(err)
	}
	p := inst.Plugin
	if p.Name != "spark" || p.ServiceAccount() != "spark-executor-plugin" || !p.Automount || p.Port != 4355 {
		t.Errorf("plugin %+v", p)
	}
	if addr, err := p.listenAddr(); err != nil || addr != "127.0.0.1:4355" {
		t.Errorf("listenAddr = %q, %v", addr, err)
	}
	var namespaces []string
	for _, doc := range strings.Split(string(inst.YAML), "---\n") {
		var m struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		if m.Kind != "" {
			namespaces = append(namespaces, m.Kind+"="+m.Metadata.Namespace)
		}
	}
	want := "ConfigMap=e2e ServiceAccount=e2e ClusterRole= ConfigMap=argo"
	if got := strings.Join(namespaces, " "); got != want {
		t.Errorf("namespaces %q, want %q (as kubectl apply -n e2e places them)", got, want)
	}

	if _, err := placeInstall([]byte("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: a}\n"), "e2e"); err == nil {
		t.Error("an install without a plugin ConfigMap: want an error")
	}
}

func TestListenAddrMustBeTheContainerPort(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"serve", "--addr", "127.0.0.1:4355"}, ""},
		{[]string{"serve", "--addr=127.0.0.1:9999"}, "containerPort"},
		{[]string{"serve"}, "no --addr"},
	} {
		p := PluginSidecar{Container: corev1.Container{Args: tc.args}, Port: 4355}
		_, err := p.listenAddr()
		if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%q: err %v, want %q", tc.args, err, tc.wantErr)
		}
	}
}

func TestLabelValue(t *testing.T) {
	if got := labelValue("TestExamples/spark-pi.yaml/Workflow"); got != "TestExamples_spark-pi.yaml_Workflow" {
		t.Errorf("labelValue = %q", got)
	}
	if got := labelValue(strings.Repeat("x", 100)); len(got) != 63 {
		t.Errorf("labelValue of 100 chars has %d", len(got))
	}
}

// Controller mode's install: the Deployment is read (its ServiceAccount,
// replicas, container) and left out of what is applied, which the harness
// plays.
func TestPlaceInstallReadsTheControllerDeployment(t *testing.T) {
	const deployment = `
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: sparkplug-controller}
spec:
  replicas: 2
  selector: {matchLabels: {app: c}}
  template:
    metadata: {labels: {app: c}}
    spec:
      serviceAccountName: sparkplug-controller
      containers:
        - name: controller
          image: ghcr.io/sparkplug-io/sparkplug:v0.1.0
          args: [controller, --namespaces=$(POD_NAMESPACE)]
`
	inst, err := placeInstall([]byte(install+deployment), "e2e")
	if err != nil {
		t.Fatal(err)
	}
	d := inst.Controller
	if d == nil || d.Name != "sparkplug-controller" || d.Replicas != 2 || d.ServiceAccount != "sparkplug-controller" || d.Container.Args[0] != "controller" {
		t.Fatalf("controller %+v", d)
	}
	if strings.Contains(string(inst.YAML), "kind: Deployment") {
		t.Errorf("the Deployment is applied:\n%s", inst.YAML)
	}
	if inst, err := placeInstall([]byte(install), "e2e"); err != nil || inst.Controller != nil {
		t.Errorf("sidecar mode's install: controller %+v, %v; want none", inst.Controller, err)
	}
}

func TestIsAck(t *testing.T) {
	for image, want := range map[string]bool{
		"ghcr.io/sparkplug-io/sparkplug-ack:v0.1.0":          true,
		"ghcr.io/sparkplug-io/sparkplug-ack@sha256:abc":      true,
		"ghcr.io/sparkplug-io/sparkplug-ack":                 true,
		"ghcr.io/sparkplug-io/sparkplug:v0.1.0":              false,
		"registry:5000/ghcr.io/sparkplug-io/sparkplug-ack:1": false,
	} {
		if got := isAck(corev1.Container{Image: image}); got != want {
			t.Errorf("isAck(%s) = %v, want %v", image, got, want)
		}
	}
}
