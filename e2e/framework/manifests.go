package framework

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Argo's words for plugin ConfigMaps (workflow/util/plugins in the Argo
// module).
const (
	labelConfigMapType      = "workflows.argoproj.io/configmap-type"
	configMapTypePlugin     = "ExecutorPlugin"
	keySidecarContainer     = "sidecar.container"
	keySidecarAutomount     = "sidecar.automountServiceAccountToken"
	pluginConfigMapSuffix   = "-executor-plugin"
	serviceAccountTokenAnno = "workflows.argoproj.io/service-account-token.name"
)

// clusterScoped are the kinds the install may hold that have no namespace.
var clusterScoped = map[string]bool{
	"Namespace": true, "ClusterRole": true, "ClusterRoleBinding": true,
	"CustomResourceDefinition": true, "PriorityClass": true,
}

// Install is what `kubectl kustomize manifests/` (or a mode's overlay,
// manifests/modes/controller) renders, placed in one namespace as
// `kubectl apply -k <dir> -n <namespace>` would.
type Install struct {
	// YAML is the rendered install, with namespaces set, without the
	// controller Deployment (Controller), which the harness plays.
	YAML []byte
	// Plugin is the plugin ConfigMap's sidecar, as Argo's controller reads it.
	Plugin PluginSidecar
	// Controller is controller mode's Deployment sparkplug-controller,
	// nil in sidecar mode.
	Controller *ControllerDeployment
}

// ControllerDeployment is the part of the Deployment sparkplug-controller
// the harness plays: each replica a host process with the container's args
// and env and the token of the pod's ServiceAccount. It is not applied:
// KWOK would only fake its pods as Running, doing nothing.
type ControllerDeployment struct {
	Name           string
	Replicas       int
	ServiceAccount string
	Container      corev1.Container
}

// Install directories (kustomizations) under the repository.
const (
	// SidecarInstallDir: sidecar mode, manifests/.
	SidecarInstallDir = "manifests"
	// ControllerInstallDir: controller mode's overlay.
	ControllerInstallDir = "manifests/modes/controller"
)

// PluginSidecar is the part of the plugin ConfigMap the harness plays.
type PluginSidecar struct {
	// Name is the plugin's name (the ConfigMap's name without
	// -executor-plugin): what a template's plugin key says.
	Name      string
	Container corev1.Container
	// Automount says the sidecar gets the token of ServiceAccount
	// <Name>-executor-plugin.
	Automount bool
	// Port is the first container port: where the agent calls.
	Port int32
}

// ServiceAccount is the account whose token the sidecar gets.
func (p PluginSidecar) ServiceAccount() string { return p.Name + pluginConfigMapSuffix }

// RenderInstall renders manifests/ with the tools' kubectl (which has
// kustomize built in) and sets namespace on every namespaced object that
// has none.
func RenderInstall(ctx context.Context, repoRoot, binDir, namespace string) (*Install, error) {
	return RenderInstallFrom(ctx, repoRoot, binDir, SidecarInstallDir, namespace)
}

// RenderInstallFrom is RenderInstall of another kustomization of the
// repository, dir relative to its root (ControllerInstallDir).
func RenderInstallFrom(ctx context.Context, repoRoot, binDir, dir, namespace string) (*Install, error) {
	return renderInstallAt(ctx, binDir, filepath.Join(repoRoot, dir), dir, namespace)
}

// KueueComponentDir is the Kueue component (its RBAC) of the repository.
const KueueComponentDir = "manifests/components/kueue"

// RenderKueueInstall renders the kustomization of the repository at dir
// (SidecarInstallDir, ControllerInstallDir) with the Kueue component added
// as its kustomization says a user adds it: a kustomization of one's own in
// tmp with namespace:, dir under resources:, the component under
// components: and its per-namespace/ under transformers:.
func RenderKueueInstall(ctx context.Context, repoRoot, binDir, dir, namespace, tmp string) (*Install, error) {
	own := filepath.Join(tmp, "install-kueue")
	if err := os.MkdirAll(own, 0o755); err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(own, repoRoot)
	if err != nil {
		return nil, err
	}
	rel = filepath.ToSlash(rel)
	body := fmt.Sprintf("namespace: %s\nresources: [%s/%s]\ncomponents: [%s/%s]\ntransformers: [%s/%s/per-namespace]\n",
		namespace, rel, dir, rel, KueueComponentDir, rel, KueueComponentDir)
	if err := os.WriteFile(filepath.Join(own, "kustomization.yaml"), []byte(body), 0o644); err != nil {
		return nil, err
	}
	return renderInstallAt(ctx, binDir, own, dir+" with "+KueueComponentDir, namespace)
}

// renderInstallAt renders the kustomization at path (what names it in
// errors) and places it in namespace.
func renderInstallAt(ctx context.Context, binDir, path, what, namespace string) (*Install, error) {
	if _, err := os.Stat(filepath.Join(path, "kustomization.yaml")); err != nil {
		return nil, fmt.Errorf("%s/kustomization.yaml: %w", what, err)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "kubectl"), "kustomize", path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("kubectl kustomize %s/: %w: %s", what, err, stderr.String())
	}
	return placeInstall(out, namespace)
}

// placeInstall sets the namespace of namespaced objects without one and
// finds the plugin ConfigMap.
func placeInstall(docs []byte, namespace string) (*Install, error) {
	inst := &Install{}
	var out bytes.Buffer
	var plugins []PluginSidecar
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(docs), 4096)
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("decode the install: %w", err)
		}
		if len(m) == 0 {
			continue
		}
		obj := &unstructured.Unstructured{Object: m}
		if !clusterScoped[obj.GetKind()] && obj.GetNamespace() == "" {
			obj.SetNamespace(namespace)
		}
		if obj.GetKind() == "Deployment" && obj.GetName() == controllerDeploymentName {
			d, err := controllerDeployment(obj)
			if err != nil {
				return nil, err
			}
			inst.Controller = d
			continue // played, not applied (ControllerDeployment)
		}
		if obj.GetKind() == "ConfigMap" && obj.GetLabels()[labelConfigMapType] == configMapTypePlugin {
			p, err := pluginSidecar(obj)
			if err != nil {
				return nil, err
			}
			plugins = append(plugins, p)
		}
		b, err := yaml.Marshal(obj.Object)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(b)
	}
	if len(plugins) != 1 {
		return nil, fmt.Errorf("the install has %d executor plugin ConfigMaps, want 1", len(plugins))
	}
	inst.YAML = out.Bytes()
	inst.Plugin = plugins[0]
	return inst, nil
}

// controllerDeploymentName is controller mode's Deployment.
const controllerDeploymentName = "sparkplug-controller"

// controllerDeployment reads the Deployment sparkplug-controller.
func controllerDeployment(obj *unstructured.Unstructured) (*ControllerDeployment, error) {
	var d appsv1.Deployment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &d); err != nil {
		return nil, fmt.Errorf("decode Deployment %s: %w", obj.GetName(), err)
	}
	spec := d.Spec.Template.Spec
	if len(spec.Containers) != 1 || spec.ServiceAccountName == "" {
		return nil, fmt.Errorf("Deployment %s: want one container and a serviceAccountName, have %d containers and %q", d.Name, len(spec.Containers), spec.ServiceAccountName)
	}
	out := &ControllerDeployment{Name: d.Name, Replicas: 1, ServiceAccount: spec.ServiceAccountName, Container: spec.Containers[0]}
	if d.Spec.Replicas != nil {
		out.Replicas = int(*d.Spec.Replicas)
	}
	return out, nil
}

// pluginSidecar reads a plugin ConfigMap as Argo's FromConfigMap does.
func pluginSidecar(obj *unstructured.Unstructured) (PluginSidecar, error) {
	var cm corev1.ConfigMap
	b, err := obj.MarshalJSON()
	if err != nil {
		return PluginSidecar{}, err
	}
	if err := yaml.Unmarshal(b, &cm); err != nil {
		return PluginSidecar{}, fmt.Errorf("decode ConfigMap %s: %w", obj.GetName(), err)
	}
	p := PluginSidecar{
		Name:      strings.TrimSuffix(cm.Name, pluginConfigMapSuffix),
		Automount: cm.Data[keySidecarAutomount] == "true",
	}
	if err := yaml.UnmarshalStrict([]byte(cm.Data[keySidecarContainer]), &p.Container); err != nil {
		return p, fmt.Errorf("ConfigMap %s: %s: %w", cm.Name, keySidecarContainer, err)
	}
	if len(p.Container.Ports) == 0 {
		return p, fmt.Errorf("ConfigMap %s: the sidecar has no port", cm.Name)
	}
	p.Port = p.Container.Ports[0].ContainerPort
	return p, nil
}

// listenAddr is the --addr the sidecar's args give, which must be on the
// container port (the agent calls localhost:<port>).
func (p PluginSidecar) listenAddr() (string, error) {
	var addr string
	args := p.Container.Args
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--addr="); ok {
			addr = v
		} else if a == "--addr" && i+1 < len(args) {
			addr = args[i+1]
		}
	}
	if addr == "" {
		return "", fmt.Errorf("the plugin sidecar's args %q give no --addr", args)
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("the plugin sidecar's --addr %q: %w", addr, err)
	}
	if port != strconv.Itoa(int(p.Port)) {
		return "", fmt.Errorf("the plugin sidecar listens on %s, but its containerPort (where the agent calls) is %d", addr, p.Port)
	}
	return addr, nil
}
