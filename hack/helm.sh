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
# and of this script:
#
#   ${SPARKPLUG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkplug}/helm/<key>/bin
#
# Usage:
#   hack/helm.sh build    build helm and oras if missing (cold: ~4 min, warm: instant)
#   hack/helm.sh bindir   print the bin dir (whether or not it is built yet)
#   hack/helm.sh key      print the cache key
#   hack/helm.sh prune    remove cached builds of other keys (older pins)
set -euo pipefail

HACK_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MOD_DIR=$HACK_DIR/helm
ORAS_MOD_DIR=$HACK_DIR/oras
CACHE_ROOT=${SPARKPLUG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkplug}

HELM_MODULE=helm.sh/helm/v3
ORAS_MODULE=oras.land/oras

# As hack/tools.sh: only the pinned modules, no go.work, no edits to the
# committed go.mod/go.sum, a static binary.
export GOWORK=off
export GOFLAGS="-mod=readonly -buildvcs=false"
export CGO_ENABLED=0

log() { printf '[helm] %s\n' "$*" >&2; }
die() {
	log "error: $*"
	exit 1
}

# key hashes every input of the build: the pins and this script.
key() {
	(
		cd "$HACK_DIR"
		sha256sum helm.sh helm/go.mod helm/go.sum oras/go.mod oras/go.sum
	) | sha256sum | cut -c1-12
}

work_dir() { printf '%s/helm/%s\n' "$CACHE_ROOT" "$(key)"; }
bin_dir() { printf '%s/bin\n' "$(work_dir)"; }

# version prints the version a scratch module (default helm's) pins for a
# module.
version() {
	go -C "${2:-$MOD_DIR}" list -m -f '{{.Version}}' "$1"
}

# build_oras builds oras into bin ($1) if it is missing; called with the
# build lock held.
build_oras() {
	local bin=$1 start=$SECONDS out v
	[[ -x $bin/oras ]] && return
	v=$(version "$ORAS_MODULE" "$ORAS_MOD_DIR")
	log "building oras $v into $bin..."
	out=$(mktemp -d "$(dirname "$bin")/.build.XXXXXX")
	go -C "$ORAS_MOD_DIR" build -trimpath -ldflags "-s -w -X $ORAS_MODULE/internal/version.Version=${v#v} -X $ORAS_MODULE/internal/version.BuildMetadata=" \
		-o "$out/oras" "$ORAS_MODULE/cmd/oras"
	mv -f "$out/oras" "$bin/oras"
	rm -rf "$out"
	log "built oras $v in $((SECONDS - start))s: $bin"
}

build() {
	local start=$SECONDS work bin out v kv kmajor kminor ldflags
	command -v go >/dev/null || die "go is not on PATH"
	work=$(work_dir)
	bin=$work/bin
	mkdir -p "$bin"
	# One build per cache key at a time; a second caller waits, then finds
	# helm built.
	if command -v flock >/dev/null; then
		exec 9>"$work/.lock"
		if ! flock -n 9; then
			log "waiting for another build of $work"
			flock 9
		fi
	fi
	rm -rf "$work"/.build.* # left by an interrupted build
	build_oras "$bin"
	if [[ -x $bin/helm ]]; then
		log "helm: up to date ($bin)"
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
	log "building helm $v into $bin... (cold: ~3 min)"
	out=$(mktemp -d "$work/.build.XXXXXX")
	go -C "$MOD_DIR" build -trimpath -ldflags "$ldflags" -o "$out/helm" "$HELM_MODULE/cmd/helm"
	# The rename is atomic: the bin dir never holds a half-written helm.
	mv -f "$out/helm" "$bin/helm"
	rm -rf "$out"
	log "built helm $v in $((SECONDS - start))s: $bin"
}

# prune removes every cached build but the current one.
prune() {
	local current d
	current=$(key)
	for d in "$CACHE_ROOT"/helm/*/; do
		[[ -d $d && $(basename "$d") != "$current" ]] || continue
		log "removing $d"
		rm -rf "$d"
	done
}

case ${1:-} in
build) build ;;
bindir) bin_dir ;;
key) key ;;
prune) prune ;;
*)
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
	;;
esac
