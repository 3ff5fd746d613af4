// Package e2e holds sparkplug's end-to-end tests (build tag e2e): real
// Workflows submitted to Argo's real workflow-controller, run by the real
// argoexec agent, calling the sparkplug binary built from this repository,
// installed from manifests/, on a real kube-apiserver with KWOK standing in
// for kubelet. Only Spark's containers are simulated (e2e/stages, e2e/sim).
//
//	make e2e      # or: go test -tags e2e -count=1 -v ./e2e/...
//
// Knobs (environment variables read by TestMain only):
//
//	SPARKPLUG_E2E_PLUGIN=bin/sparkplug   run this binary instead of building ./cmd/sparkplug
//	SPARKPLUG_E2E_KEEP=1                 keep the state dirs (logs, kubeconfigs) after the run
//	SPARKPLUG_E2E_TOKEN_MODE=host-file   agents read the plugin token from /var/run/argo (root)
//	                                     instead of a private mount namespace
//	SPARKPLUG_E2E_ARGO=v4.0.2            run another Argo version, one hack/argo.sh pins
//	                                     (make e2e ARGO=v4.0.2 builds it first)
//	SPARKPLUG_E2E_SEED=N                 the chaos tests (TestPluginKilledAgainAndAgain,
//	                                     TestAPIFaultsNeverLoseOrDuplicateAJob) replay the run of
//	                                     seed N (each logs the seed it used)
//
// One environment serves every test of the binary (TestMain); tests share
// its namespace and run in parallel where they do not restart shared
// processes. The subpackages are the harness: cluster (the control plane),
// argo (Argo's controller and a kubelet for agent pods and their sparkplug
// sidecars), stages and sim (the Spark simulation), sparkconf (Spark's conf
// as a driver reads it), faults (a fault-injecting proxy in front of the
// API server), framework (the composition and the Given/When/Then
// fixture), cmd/demo (make demo); for the real node, images (its images,
// built locally, and a local registry), cmd/sparkstandin (the Spark
// stand-in its Spark pods run) and realnode (Spark steps on the real node,
// sparkplug installed from the release; make e2e-node).
package e2e
