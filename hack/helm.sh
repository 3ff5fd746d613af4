#!/usr/bin/env bash
# hack/helm.sh builds the chart's tools: helm, which lints and renders the
# chart in manifests/chart/sparkplug for make chart-lint and make
# test-chart, from the Go module pinned in hack/helm/{go.mod,go.sum}; and
# oras, which pushes the chart's Artifact Hub metadata in the release's
# integration test, from hack/oras/{go.mod,go.sum} (a module of its own:
# in helm's, it would move helm's dependencies). It is apart from
# hack/tools.sh so that pinning or bumping them never changes the test
# control plane's cache key (and rebuilds it).
#
# The binaries go to a cache outside the clone, keyed by a hash of the pins
# and of this script's recipe (its functions and Go environment, hack/lib.sh):
#
#   ${SPARKPLUG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkplug}/helm/<key>/bin
#
# Usage:
#   hack/helm.sh build    build helm and oras if missing (cold: ~4 min, warm: instant)
#   hack/helm.sh bindir   print the bin dir (whether or not it is built yet)
#   hack/helm.sh key      print the cache key
#   hack/helm.sh prune    remove cached builds of other keys (older pins)
set -euo pipefail

NAME=helm
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
MOD_DIR=$HACK_DIR/helm
ORAS_MOD_DIR=$HACK_DIR/oras

HELM_MODULE=helm.sh/helm/v3
ORAS_MODULE=oras.land/oras

# As hack/tools.sh: only the pinned modules, no go.work, no edits to the
# committed go.mod/go.sum, a static binary.
export GOWORK=off
export GOFLAGS="-mod=readonly -buildvcs=false"
export CGO_ENABLED=0

# key hashes every input of the build: the pins and this script's recipe.
key() { hash_key "$HACK_DIR" helm/go.mod helm/go.sum oras/go.mod oras/go.sum; }

# version prints the version a scratch module (default helm's) pins for a
# module.
version() {
	go -C "${2:-$MOD_DIR}" list -m -f '{{.Version}}' "$1"
}

# build_oras builds oras into the bin dir if it is missing; called with the
# build lock held.
build_oras() {
	local start=$SECONDS out v
	[[ -x $BIN/oras ]] && return
	v=$(version "$ORAS_MODULE" "$ORAS_MOD_DIR")
	log "building oras $v into $BIN..."
	out=$(mktemp -d "$WORK/.build.XXXXXX")
	go -C "$ORAS_MOD_DIR" build -trimpath -ldflags "-s -w -X $ORAS_MODULE/internal/version.Version=${v#v} -X $ORAS_MODULE/internal/version.BuildMetadata=" \
		-o "$out/oras" "$ORAS_MODULE/cmd/oras"
	mv -f "$out/oras" "$BIN/oras"
	rm -rf "$out"
	log "built oras $v in $((SECONDS - start))s: $BIN"
}

build() {
	local start=$SECONDS out v kv kmajor kminor ldflags
	command -v go >/dev/null || die "go is not on PATH"
	take_work
	build_oras
	if [[ -x $BIN/helm ]]; then
		log "helm: up to date ($BIN)"
		return
	fi
	v=$(version "$HELM_MODULE")
	# As helm's own Makefile: the version, and the Kubernetes version helm
	# assumes without a cluster (template, lint) from its client-go, whose
	# v0.N is Kubernetes 1.N.
	kv=$(version k8s.io/client-go)
	kv=${kv#v}
	kmajor=$((${kv%%.*} + 1))
	kminor=${kv#*.}
	kminor=${kminor%%.*}
	ldflags="-s -w -X $HELM_MODULE/internal/version.version=$v -X $HELM_MODULE/internal/version.metadata="
	ldflags+=" -X $HELM_MODULE/internal/version.gitTreeState=clean"
	ldflags+=" -X $HELM_MODULE/pkg/lint/rules.k8sVersionMajor=$kmajor -X $HELM_MODULE/pkg/lint/rules.k8sVersionMinor=$kminor"
	ldflags+=" -X $HELM_MODULE/pkg/chartutil.k8sVersionMajor=$kmajor -X $HELM_MODULE/pkg/chartutil.k8sVersionMinor=$kminor"
	log "building helm $v into $BIN... (cold: ~3 min)"
	out=$(mktemp -d "$WORK/.build.XXXXXX")
	go -C "$MOD_DIR" build -trimpath -ldflags "$ldflags" -o "$out/helm" "$HELM_MODULE/cmd/helm"
	# The rename is atomic: the bin dir never holds a half-written helm.
	mv -f "$out/helm" "$BIN/helm"
	rm -rf "$out"
	log "built helm $v in $((SECONDS - start))s: $BIN"
}

main "$@"
