#!/usr/bin/env bash
# hack/kueue.sh builds what the Kueue end-to-end tier (make e2e-kueue) runs:
# Kueue's controller manager (cmd/kueue of sigs.k8s.io/kueue, pinned in
# hack/kueue/{go.mod,go.sum}) as a static binary, and beside it Kueue's CRDs
# (config/components/crd/bases) and webhook configurations
# (config/components/webhook/manifests.yaml), copied from the same module at
# build time so that the tests read them from the cache and never depend on a
# module cache that `go clean -modcache` may have emptied.
#
# It is apart from hack/tools.sh so that pinning or bumping Kueue never
# changes the control plane's cache key (and rebuilds it). Everything goes to
# a cache outside the clone, keyed by a hash of this script's recipe (hack/lib.sh) and the pins:
#
#   ${SPARKPLUG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkplug}/kueue/<key>/bin/kueue
#   ${SPARKPLUG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkplug}/kueue/<key>/bin/crds/*.yaml
#   ${SPARKPLUG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkplug}/kueue/<key>/bin/webhooks.yaml
#
# Usage:
#   hack/kueue.sh build    build whatever is missing (cold: ~4 min, warm: instant)
#   hack/kueue.sh bindir   print the bin dir (whether or not it is built yet)
#   hack/kueue.sh key      print the cache key
#   hack/kueue.sh prune    remove cached builds of other keys (older pins)
set -euo pipefail

NAME=kueue
PRUNE_WRITABLE=1
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
MOD_DIR=$HACK_DIR/kueue

KUEUE_MODULE=sigs.k8s.io/kueue

# As hack/tools.sh: only the pinned modules, no go.work, no edits to the
# committed go.mod/go.sum, static binaries.
export GOWORK=off
export GOFLAGS="-mod=readonly -buildvcs=false"
export CGO_ENABLED=0

key() { hash_key "$ROOT" hack/kueue/go.mod hack/kueue/go.sum; }

version() { go -C "$MOD_DIR" list -m -f '{{.Version}}' "$KUEUE_MODULE"; }

# build_kueue builds cmd/kueue as upstream's Makefile does (the version in
# pkg/version, which the manager logs when it starts).
build_kueue() {
	local v out
	v=$(version)
	out=$(mktemp -d "$WORK/.build.XXXXXX")
	go -C "$MOD_DIR" build -trimpath -ldflags "-s -w -X $KUEUE_MODULE/pkg/version.GitVersion=$v" \
		-o "$out/kueue" "$KUEUE_MODULE/cmd/kueue"
	mv -f "$out/kueue" "$BIN/kueue"
	rm -rf "$out"
}

# copy_config copies the CRDs and the webhook configurations of the very
# module the binary was built from (go list -m -f {{.Dir}} downloads it if
# needed and verifies it against go.sum). The webhooks are kustomize's input
# (a Service reference to fill in): the tests point them at the manager.
copy_config() {
	local dir out
	dir=$(go -C "$MOD_DIR" list -m -f '{{.Dir}}' "$KUEUE_MODULE")
	[[ -n $dir && -d $dir/config/components/crd/bases ]] || die "no CRDs in $KUEUE_MODULE ($dir)"
	out=$(mktemp -d "$WORK/.build.XXXXXX")
	cp "$dir"/config/components/crd/bases/*.yaml "$out/"
	chmod 0755 "$out"
	chmod 0644 "$out"/*.yaml
	install -m 0644 "$dir/config/components/webhook/manifests.yaml" "$BIN/webhooks.yaml"
	rm -rf "$BIN/crds"
	mv "$out" "$BIN/crds"
}

build() {
	command -v go >/dev/null || die "go is not on PATH"
	take_work
	go -C "$MOD_DIR" mod download "$KUEUE_MODULE"
	step "kueue $(version)" "~4 min" test -e "$BIN/kueue" -- build_kueue
	step "Kueue's CRDs and webhooks" "instant" test -e "$BIN/crds/kueue.x-k8s.io_workloads.yaml" -- copy_config
	log "kueue ready: $BIN"
}

main "$@"
