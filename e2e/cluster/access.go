package cluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// WaitAllowed waits until the API server's authorizer allows the
// ServiceAccount namespace/name every verb of rules on its resources in
// namespace (a SubjectAccessReview each): it reads Roles and RoleBindings
// from a cache of its own, so a binding just created may not count yet,
// and a client's first call as that account would be forbidden.
func (c *Cluster) WaitAllowed(ctx context.Context, namespace, name string, rules []rbacv1.PolicyRule) error {
	user := "system:serviceaccount:" + namespace + ":" + name
	var pending string
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, r := range rules {
			for _, group := range r.APIGroups {
				for _, res := range r.Resources {
					resource, sub, _ := strings.Cut(res, "/")
					var object string // a rule for named objects allows those only
					if len(r.ResourceNames) > 0 {
						object = r.ResourceNames[0]
					}
					for _, verb := range r.Verbs {
						sar, err := c.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
							Spec: authorizationv1.SubjectAccessReviewSpec{User: user, ResourceAttributes: &authorizationv1.ResourceAttributes{
								Namespace: namespace, Verb: verb, Group: group, Resource: resource, Subresource: sub, Name: object}},
						}, metav1.CreateOptions{})
						if err != nil {
							return false, err
						}
						if !sar.Status.Allowed {
							pending = verb + " " + res
							return false, nil
						}
					}
				}
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("%s may not %s in %s yet: %w", user, pending, namespace, err)
	}
	return nil
}
