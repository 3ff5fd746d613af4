package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
)

const (
	// applyFieldManager owns the fields the tests apply.
	applyFieldManager = "sparkplug-e2e"
	// applyWait bounds the wait for a kind to be served (a CRD applied just
	// before) and for a CRD to be established.
	applyWait = 30 * time.Second
)

var crdKind = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

// Apply creates or updates every object of yamlDocs (YAML documents
// separated by ---, or a JSON object; List kinds are expanded) with
// server-side apply, in order. Objects of a namespaced kind without a
// namespace go to "default". After a CustomResourceDefinition, Apply waits
// until it is established, so later documents may use its kind.
func (c *Cluster) Apply(ctx context.Context, yamlDocs []byte) error {
	objs, err := decodeObjects(yamlDocs)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if err := c.applyObject(ctx, obj); err != nil {
			return fmt.Errorf("apply %s %s: %w", obj.GetKind(), objectName(obj), err)
		}
	}
	return nil
}

// decodeObjects splits YAML or JSON documents into objects, skipping empty
// documents and expanding Lists.
func decodeObjects(docs []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(docs), 4096)
	for i := 0; ; i++ {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("decode document %d: %w", i, err)
		}
		if len(m) == 0 {
			continue
		}
		obj := &unstructured.Unstructured{Object: m}
		if obj.GetAPIVersion() == "" || obj.GetKind() == "" {
			return nil, fmt.Errorf("document %d has no apiVersion or kind", i)
		}
		if obj.IsList() {
			list, err := obj.ToList()
			if err != nil {
				return nil, fmt.Errorf("document %d: %w", i, err)
			}
			for j := range list.Items {
				objs = append(objs, &list.Items[j])
			}
			continue
		}
		if obj.GetName() == "" {
			return nil, fmt.Errorf("document %d (%s) has no metadata.name", i, obj.GetKind())
		}
		objs = append(objs, obj)
	}
}

func objectName(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + obj.GetName()
	}
	return obj.GetName()
}

func (c *Cluster) applyObject(ctx context.Context, obj *unstructured.Unstructured) error {
	gvk := obj.GroupVersionKind()
	mapping, err := c.restMapping(ctx, gvk)
	if err != nil {
		return err
	}
	var res dynamic.ResourceInterface = c.Dynamic.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if obj.GetNamespace() == "" {
			obj.SetNamespace(metav1.NamespaceDefault)
		}
		res = c.Dynamic.Resource(mapping.Resource).Namespace(obj.GetNamespace())
	}
	body, err := obj.MarshalJSON()
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	force := true
	if _, err := res.Patch(ctx, obj.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{
		FieldManager: applyFieldManager,
		Force:        &force,
	}); err != nil {
		return err
	}
	if gvk.GroupKind() == crdKind {
		return waitEstablished(ctx, res, obj.GetName())
	}
	return nil
}

// restMapping maps a kind to its resource, rediscovering the API while the
// kind is not (yet) served.
func (c *Cluster) restMapping(ctx context.Context, gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	c.mapperOnce.Do(func() {
		c.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(c.Client.Discovery()))
	})
	var mapping *meta.RESTMapping
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, applyWait, true, func(context.Context) (bool, error) {
		var err error
		mapping, err = c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) {
			c.mapper.Reset()
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		return nil, fmt.Errorf("find the resource of %s: %w", gvk, err)
	}
	return mapping, nil
}

// waitEstablished waits for the Established condition of a CRD.
func waitEstablished(ctx context.Context, crds dynamic.ResourceInterface, name string) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, applyWait, true, func(ctx context.Context) (bool, error) {
		crd, err := crds.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, c := range conditions {
			cond, _ := c.(map[string]any)
			if cond["type"] == "Established" && cond["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("wait for CRD %s to be established: %w", name, err)
	}
	return nil
}
