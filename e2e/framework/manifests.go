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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// Install is what `kubectl kustomize manifests/` renders, placed in one
// namespace as `kubectl apply -k manifests/ -n <namespace>` would.
type Install struct {
	// YAML is the rendered install, with namespaces set.
	YAML []byte
	// Plugin is the plugin ConfigMap's sidecar, as Argo's controller reads it.
	Plugin PluginSidecar
}

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
	dir := filepath.Join(repoRoot, "manifests")
	if _, err := os.Stat(filepath.Join(dir, "kustomization.yaml")); err != nil {
		return nil, fmt.Errorf("manifests/kustomization.yaml: %w", err)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "kubectl"), "kustomize", dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("kubectl kustomize manifests/: %w: %s", err, stderr.String())
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
