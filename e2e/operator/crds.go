package operator

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/e2e/cluster"
)

// Group is the API group of the operator's kinds.
const Group = "sparkoperator.k8s.io"

// sparkApplicationsCRD is spark-operator v2.5.2's SparkApplication CRD
// (config/crd/bases/sparkoperator.k8s.io_sparkapplications.yaml of
// github.com/kubeflow/spark-operator/v2, Apache-2.0), with the full schema:
// the API server validates every SparkApplication as in a real install.
// TestSparkApplicationCRDIsThePinnedOne keeps it equal to the module's.
//
//go:embed sparkapplications-crd.yaml
var sparkApplicationsCRD []byte

// A CRD of a *.k8s.io group needs the API review that approved it named,
// as the module's CRDs do.
const (
	apiApproved   = "api-approved.kubernetes.io"
	apiApprovedBy = "https://github.com/kubeflow/spark-operator/pull/1298"
)

// otherKind is a kind of the operator that its controller watches but the
// benchmark never creates.
type otherKind struct {
	kind, plural, version string
}

// otherKinds are the kinds of the two other controllers that `controller
// start` always runs (ScheduledSparkApplication and SparkConnect): without
// their CRDs their informers never sync and the manager exits. Nothing
// creates them, so they are installed with an open schema (800 kB less to
// establish); TestOtherKindsAreTheModulesOnes checks names and versions.
var otherKinds = []otherKind{
	{kind: "ScheduledSparkApplication", plural: "scheduledsparkapplications", version: "v1beta2"},
	{kind: "SparkConnect", plural: "sparkconnects", version: "v1alpha1"},
}

// openCRD is a CRD for k that accepts any object, with a status
// subresource as the module's has.
func openCRD(k otherKind) map[string]any {
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata": map[string]any{
			"name":        k.plural + "." + Group,
			"annotations": map[string]any{apiApproved: apiApprovedBy},
		},
		"spec": map[string]any{
			"group": Group,
			"scope": "Namespaced",
			"names": map[string]any{
				"kind":     k.kind,
				"listKind": k.kind + "List",
				"plural":   k.plural,
				"singular": strings.ToLower(k.kind),
			},
			"versions": []any{map[string]any{
				"name":         k.version,
				"served":       true,
				"storage":      true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type":                                 "object",
					"x-kubernetes-preserve-unknown-fields": true,
				}},
			}},
		},
	}
}

// InstallCRDs applies the operator's CRDs and waits until they are
// established: SparkApplication's as upstream ships it, the two kinds the
// benchmark never creates with an open schema. Applying again is a no-op.
func InstallCRDs(ctx context.Context, c *cluster.Cluster) error {
	if err := c.Apply(ctx, sparkApplicationsCRD); err != nil {
		return fmt.Errorf("apply the SparkApplication CRD: %w", err)
	}
	for _, k := range otherKinds {
		b, err := yaml.Marshal(openCRD(k))
		if err != nil {
			return fmt.Errorf("encode the %s CRD: %w", k.kind, err)
		}
		if err := c.Apply(ctx, b); err != nil {
			return fmt.Errorf("apply the %s CRD: %w", k.kind, err)
		}
	}
	return nil
}
