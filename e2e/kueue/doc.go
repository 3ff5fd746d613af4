// Package kueue runs Spark steps that queue through a real Kueue (v0.19.2,
// built by hack/kueue.sh, its controller manager a host process with its
// CRDs and webhooks; framework.Options.Kueue) in the e2e environment:
// quota that fits one application at a time, preemption by priority,
// flavours' node labels and tolerations, partial admission of dynamic
// allocation, stop/terminate releasing the quota, the template's timeout
// ending a queued step, and a step that can never fit failing at once
// (ends_test.go). One environment
// serves the package's tests (TestMain); they run only with
// SPARKPLUG_E2E_KUEUE=1 (make e2e-kueue). TestKueueAdmitsAHandMadeWorkload
// checks Kueue alone, so that a broken Kueue set-up shows apart from a
// broken sparkplug.
package kueue
