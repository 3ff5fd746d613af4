# sparkplug: `make help` lists every target.
SHELL := /bin/bash
.DEFAULT_GOAL := help

GO      ?= go
# The Go that builds, tests and releases sparkplug: a release with the
# standard library's security fixes, taken from the Go module proxy like any
# module (a machine's own Go ignores go.mod's toolchain line when its
# GOTOOLCHAIN is local). Keep in step with go.mod's toolchain line and the
# Dockerfile; make vuln keys its cache by it.
GO_TOOLCHAIN ?= go1.27.3
export GOTOOLCHAIN := $(GO_TOOLCHAIN)
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

# The test control plane (etcd, kube-apiserver, ..., Argo) is built from Go
# modules into a cache outside the clone; tests find it here.
export SPARKPLUG_TOOLS_BIN := $(shell bash hack/tools.sh bindir)

.PHONY: help
help: ## list every target
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  %-18s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## build bin/sparkplug
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/sparkplug ./cmd/sparkplug

.PHONY: tools
tools: ## build the test control plane from pinned Go modules (cold ~15 min, then cached)
	bash hack/tools.sh build

.PHONY: test
test: verify-static vuln test-unit test-chart test-integration e2e e2e-controller e2e-kueue e2e-node ## every test tier: verify (its golden files in the unit tier), vuln, unit, chart, integration, e2e (KWOK), e2e-controller (the same in controller mode), e2e-kueue (Spark steps queued by a real Kueue), e2e-node (a real kubelet)

.PHONY: debs
debs: ## install the Debian packages the tests need if missing (zsh and fish, for the completion scripts)
	bash hack/debs.sh

.PHONY: test-unit
test-unit: debs ## unit tests: pure logic, no API server
	$(GO) test -count=1 ./...
	$(GO) test -count=1 -tags $(ACK_TAGS) ./cmd/sparkplug-ack/... ./plugin/ack/... ./plugin/acksrv/... ./plugin/edge/...

.PHONY: test-integration
# Only the packages with integration tests: the others' tests are unit
# tests, which test-unit has run already.
INTEGRATION_PKGS = $(sort $(dir $(shell grep -rl --include='*_test.go' '^//go:build integration' .)))

test-integration: tools ## integration tests against a real kube-apiserver, etcd and controller-manager (only the packages that have them)
	$(GO) test -count=1 -tags integration -timeout 20m -parallel 8 $(INTEGRATION_PKGS)

# The Helm chart (manifests/chart/sparkplug) is tested with the real helm,
# built from hack/helm by hack/helm.sh into a cache of its own (cold ~3 min),
# beside oras (hack/oras), which the release's integration test pushes the
# chart's Artifact Hub metadata with.
HELM := $(shell bash hack/helm.sh bindir)/helm

.PHONY: helm
helm: ## build the pinned helm the chart tests use, and oras (cached)
	bash hack/helm.sh build

.PHONY: test-chart
test-chart: helm ## the Helm chart's tests: lint, golden helm template output, ConfigMap and Role as manifests/ has them
	SPARKPLUG_HELM=$(HELM) $(GO) test -count=1 -tags chart -run Chart ./manifests/

.PHONY: chart-lint
chart-lint: helm ## helm lint --strict the chart
	$(HELM) lint --strict manifests/chart/sparkplug

# ARGO=VERSION runs the e2e suite against another Argo version than the
# tools' (v3.7.18): one that hack/argo.sh pins (bash hack/argo.sh versions).
ARGO ?=

.PHONY: e2e
.PHONY: servers
servers: ## build argo (for argo server) and versitygw (an S3 server), which e2e runs, from hack/servers (cached; cold ~5 min)
	bash hack/servers.sh build

e2e: tools servers ## end-to-end tests: real Argo controller and agent, the plugin from manifests/, KWOK for pods (~5 min); ARGO=v4.0.2 for another Argo
	$(if $(ARGO),bash hack/argo.sh build $(ARGO))
	SPARKPLUG_E2E_ARGO=$(ARGO) GO=$(GO) bash hack/e2e.sh -count=1 -tags e2e -timeout 30m -parallel 64 -v ./e2e/...

# The same suite with sparkplug in controller mode: manifests/modes/controller,
# the acknowledger as each agent pod's sidecar and sparkplug controller's two
# replicas as host processes; adds the handover tests (handover_test.go).
.PHONY: e2e-controller
e2e-controller: tools servers ## the e2e suite in controller mode (manifests/modes/controller: sparkplug controller's replicas, the acknowledger in agent pods) with the leader kill and handover tests (~5.5 min: a test that sets, kills or stops the controller has one of its own, in its own namespace; the tests whose subject the mode does not change run in make e2e only)
	$(if $(ARGO),bash hack/argo.sh build $(ARGO))
	SPARKPLUG_E2E_MODE=controller SPARKPLUG_E2E_ARGO=$(ARGO) GO=$(GO) bash hack/e2e.sh -count=1 -tags e2e -timeout 30m -parallel 64 -v ./e2e/

# Spark steps queued by a real Kueue (e2e/kueue): Kueue's controller manager,
# built by hack/kueue.sh into a cache of its own (cold ~3 min on top of make
# tools), runs as a host process with its CRDs and webhooks.
.PHONY: e2e-kueue
e2e-kueue: tools ## Spark steps queued by a real Kueue (v0.19.2, built by hack/kueue.sh): quota for one application at a time, preemption, flavours, partial admission, stop/terminate, a queued step timing out, a step that can never fit; with the sidecar, then in controller mode (~2.5 min)
	bash hack/kueue.sh build
	SPARKPLUG_E2E_KUEUE=1 GO=$(GO) bash hack/e2e.sh -count=1 -tags e2e -timeout 20m -parallel 4 -v ./e2e/kueue/
	SPARKPLUG_E2E_KUEUE=1 SPARKPLUG_E2E_MODE=controller GO=$(GO) bash hack/e2e.sh -count=1 -tags e2e -timeout 20m -parallel 4 -v ./e2e/kueue/

# The real node (e2e/node, and e2e/realnode's Spark steps on it with
# sparkplug installed from the release): containerd, runc and the CNI plugins from
# Debian, a kubelet and CoreDNS built by hack/node.sh into a cache of its
# own (cold ~2 min on top of make tools). Needs root; changes the host
# (bridge cni0, iptables, sysctls) and undoes it at the end.
.PHONY: e2e-node
e2e-node: tools ## the real node's tests: a kubelet with containerd and runc beside KWOK's node, pods that reach the API server through CoreDNS, exit codes, OOM kills; Spark steps with Argo's real agent and the release's sidecar (root)
	bash hack/node.sh build
	SPARKPLUG_E2E_NODE=1 $(GO) test -tags e2e -count=1 -p 1 -timeout 30m -v ./e2e/node/... ./e2e/realnode/...

# SOAK_COUNT runs of the API fault test in one e2e environment, each with a
# seed of its own (the log names each; SPARKPLUG_E2E_SEED=N replays one).
SOAK_COUNT ?= 20
# MODE is sparkplug's mode in make soak: sidecar (empty) or controller.
MODE ?=

.PHONY: soak
soak: tools servers ## the API fault test (TestAPIFaultsNeverLoseOrDuplicateAJob) SOAK_COUNT (20) times in a row, a new seed each, in one environment; MODE=controller for controller mode; not in make test (~30 min)
	SPARKPLUG_E2E_MODE=$(MODE) GO=$(GO) bash hack/e2e.sh -count=$(SOAK_COUNT) -tags e2e -timeout 150m -v -run '^TestAPIFaultsNeverLoseOrDuplicateAJob$$' ./e2e/

.PHONY: e2e-matrix
e2e-matrix: tools ## the e2e suite against every Argo version sparkplug supports (before each release; ~5 min each, plus ~5 min per Argo build)
	$(MAKE) e2e
	for v in $$(bash hack/argo.sh versions); do $(MAKE) e2e ARGO=$$v || exit 1; done

.PHONY: bench
bench: tools ## benchmarks, printed: launches/min, launch latency against raw creates, API requests per launch and poll (real API server), parse and build costs
	$(GO) test -run '^$$' -bench . -benchmem ./plugin/...
	$(GO) test -tags integration -run '^$$' -bench . -benchmem ./cmd/sparkplug/

.PHONY: vuln
vuln: ## govulncheck offline against a pinned golang.org/x/vulndb (hack/vuln); fails on a called vulnerability neither fixed nor accepted in hack/vuln/accepted.txt
	GO=$(GO) bash hack/vuln.sh

.PHONY: bench-e2e
bench-e2e: tools ## scale benchmark through the real Argo controller and agent, sidecar and controller mode: N=200/1000 Spark steps in one workflow and N one-step workflows (at Argo's defaults and its raised client limits) vs container steps vs the Spark operator; merges into docs/bench/scale.json, rewrites the How fast tables of docs/operations.md and docs/bench/*.png (BENCH_N=200 for one size, BENCH_KINDS=controller-wf,plain-wf for some launchers, BENCH_ARGO=defaults for one setting)
	bash hack/operator.sh build
	SPARKPLUG_BENCH_WRITE=1 SPARKPLUG_BENCH_N=$(BENCH_N) SPARKPLUG_BENCH_KINDS=$(BENCH_KINDS) SPARKPLUG_BENCH_ARGO=$(BENCH_ARGO) $(GO) test -count=1 -tags bench -timeout 180m -run TestScale -v ./e2e/bench/

# Fuzz targets, package:function. go test -fuzz takes one target a run, so
# make fuzz runs them one after another; a failing input is written to the
# package's testdata/fuzz/ (commit it only as a regression seed).
FUZZ_TARGETS := ./plugin/spec:FuzzParse ./plugin/spec:FuzzParseQuantity ./plugin/step:FuzzRequest ./plugin/objects:FuzzBuild ./plugin/state:FuzzAssess
FUZZTIME     ?= 3m

.PHONY: fuzz
fuzz: ## fuzz each target for FUZZTIME (3m): spark body, whole request, builder, state from pods
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "== $${t#*:} in $${t%%:*} for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$${t#*:}\$$" -fuzztime $(FUZZTIME) $${t%%:*}; \
	done

.PHONY: verify
verify: verify-static ## gofmt, go vet, go mod tidy, golden files, the plugin ConfigMap and the Markdown links are clean
	$(GO) test -count=1 $(GOLDEN_PKGS) -run Golden

# One go vet of every test tier's files at once: each package is vetted
# once, with its integration, e2e, bench and chart files (no two of them
# declare the same names; the untagged build is compiled by the unit
# tier). make test runs verify-static: its unit tier runs the golden
# tests with the others.
.PHONY: verify-static
verify-static: ## what verify checks but the golden files: gofmt, go vet (all tags), go mod tidy, the plugin ConfigMap, the Markdown links
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet -tags integration,e2e,bench,chart ./...
	$(GO) mod tidy -diff
	$(GO) test -count=1 ./hack/mdlinks/
	@tmp=$$(mktemp); trap 'rm -f $$tmp' EXIT; \
	for p in $(PLUGINS); do \
		$(GO) run ./hack/genplugin -in $${p%%:*} -out $$tmp && \
		diff -u $${p#*:} $$tmp || { echo "$${p#*:} is stale: run make plugin"; exit 1; }; \
	done

# Packages whose tests compare with golden files (testdata/*.golden.yaml,
# .golden.txt, .golden.json; manifests/: the chart README's values table, no helm needed).
GOLDEN_PKGS := ./plugin/objects/ ./plugin/convert/ ./plugin/submit/ ./plugin/get/ ./plugin/run/ ./cmd/sparkplug/ ./manifests/

.PHONY: update
update: ## rewrite golden files from the current code
	$(GO) test $(GOLDEN_PKGS) -run Golden -update
	bash hack/helm.sh build
	SPARKPLUG_HELM=$(HELM) $(GO) test -tags chart ./manifests/ -run ChartGolden -update

# Each ExecutorPlugin manifest and the ConfigMap generated from it,
# manifest:configmap: the sidecar's (the default mode) and controller
# mode's acknowledger's.
PLUGINS := plugin.yaml:manifests/spark-executor-plugin-configmap.yaml \
	plugin-ack.yaml:manifests/modes/controller/spark-executor-plugin-configmap.yaml

.PHONY: plugin
plugin: ## generate the plugin ConfigMaps from plugin.yaml (manifests/) and plugin-ack.yaml (manifests/modes/controller/)
	@set -e; for p in $(PLUGINS); do $(GO) run ./hack/genplugin -in $${p%%:*} -out $${p#*:}; done

# REGISTRY (HOST/PATH) is where make push puts a release, and the
# repository make release names its images in unless IMAGE says otherwise.
REGISTRY   ?=
IMAGE      ?= $(if $(REGISTRY),$(REGISTRY)/sparkplug,ghcr.io/sparkplug-io/sparkplug)
IMAGE_ARCH ?= amd64

.PHONY: image
image: ## build the image as bin/sparkplug-image.tar, without Docker (docker load / crane push it)
	CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/linux-$(IMAGE_ARCH)/sparkplug ./cmd/sparkplug
	$(GO) run ./hack/image -binary bin/linux-$(IMAGE_ARCH)/sparkplug -arch $(IMAGE_ARCH) \
		-ref $(IMAGE):$(VERSION) -version $(VERSION) -out bin/sparkplug-image.tar

ACK_IMAGE ?= $(IMAGE)-ack
# The acknowledger serves HTTP/1.1 on loopback only, and net/http serves
# HTTP/2 only over TLS or when a server asks for unencrypted HTTP/2, which
# it does not: nethttpomithttp2 leaves net/http's HTTP/2 out of its binary
# (0.4 MB, 0.25 MiB resident). hack/release.sh builds it the same way, and
# make test-unit runs its packages' tests with the tag too.
ACK_TAGS := nethttpomithttp2

.PHONY: ack-image
ack-image: ## build the acknowledger (cmd/sparkplug-ack, controller mode's agent-pod part) and its image as bin/sparkplug-ack-image.tar
	CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) $(GO) build -trimpath -tags $(ACK_TAGS) -ldflags '$(LDFLAGS)' -o bin/linux-$(IMAGE_ARCH)/sparkplug-ack ./cmd/sparkplug-ack
	$(GO) run ./hack/image -product sparkplug-ack -binary bin/linux-$(IMAGE_ARCH)/sparkplug-ack -arch $(IMAGE_ARCH) \
		-ref $(ACK_IMAGE):$(VERSION) -version $(VERSION) -out bin/sparkplug-ack-image.tar

.PHONY: bench-ack
bench-ack: ## the acknowledger's figures: binary and image size, resident memory idle and after 10,000 requests, beside a bare net/http server's built the same way (IMAGE_ARCH must be this machine's)
	$(MAKE) ack-image
	CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) $(GO) build -trimpath -tags $(ACK_TAGS) -ldflags '-s -w' -o bin/linux-$(IMAGE_ARCH)/ackbench-bare ./hack/ackbench/bare
	$(GO) run ./hack/ackbench -binary bin/linux-$(IMAGE_ARCH)/sparkplug-ack -image bin/sparkplug-ack-image.tar -bare bin/linux-$(IMAGE_ARCH)/ackbench-bare

.PHONY: release
release: helm ## VERSION=vX.Y.Z [REGISTRY=HOST/PATH]: image indexes (amd64, arm64) of sparkplug and its acknowledger as OCI archives, plugin ConfigMap, install bundle, kustomize base, chart, all pinned by digest, an SPDX SBOM, SHA256SUMS, in bin/release/VERSION; no cluster, no Docker (~25 s with warm Go caches, plus make helm's ~3 min the first time)
	HELM=$(HELM) IMAGE=$(IMAGE) ACK_IMAGE=$(ACK_IMAGE) ACK_TAGS=$(ACK_TAGS) bash hack/release.sh $(VERSION) bin/release/$(VERSION)

.PHONY: push
push: ## REGISTRY=HOST/PATH VERSION=vX.Y.Z: push make release's two image indexes (REGISTRY/sparkplug, REGISTRY/sparkplug-ack) and its chart (REGISTRY/charts/sparkplug) to an OCI registry, with your docker login's credentials
	@test -n "$(REGISTRY)" || { echo "make push needs REGISTRY=HOST/PATH, the one make release was given"; exit 2; }
	$(GO) run ./hack/release/push -dir bin/release/$(VERSION) -version $(VERSION) \
		-image $(IMAGE) -ack-image $(ACK_IMAGE) -charts $(REGISTRY)/charts

.PHONY: demo
demo: tools ## a local Kubernetes + Argo, the plugin installed, examples/spark-dag.yaml run to completion (KEEP=1 leaves it up)
	$(GO) run ./e2e/cmd/demo $(if $(KEEP),--keep)

.PHONY: demo-down
demo-down: ## stop a demo left running by make demo KEEP=1
	$(GO) run ./e2e/cmd/demo down

.PHONY: clean
clean: ## remove build output (the tools cache stays)
	rm -rf bin
