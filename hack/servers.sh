#!/usr/bin/env bash
# hack/servers.sh builds the servers some e2e tests need besides the test
# control plane: `argo` (for `argo server`, whose artifact endpoint the Argo
# UI calls) and versitygw (an S3-compatible server), from the Go modules
# pinned in hack/servers/<name>/{go.mod,go.sum}. It is apart from
# hack/tools.sh so that adding or bumping them never changes the control
# plane's cache key (and rebuilds it).
#
# The binaries go to a cache outside the clone, keyed by a hash of the pins
# and of this script's recipe (its functions and Go environment, hack/lib.sh):
#
#   ${SPARKPLUG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkplug}/servers/<key>/bin
#
# argo is built from a patched copy of the argo-workflows module, as
# hack/tools.sh builds the controller: signal_linux.go (a git symlink
# dropped from module zips) restored, and an ui/dist/app holding one
# placeholder page, since argo server embeds the web UI's build output,
# which module zips lack (the tests call its API, never its web pages).
#
# Usage:
#   hack/servers.sh build    build whatever is missing (cold: ~10 min, warm: instant)
#   hack/servers.sh bindir   print the bin dir (whether or not it is built yet)
#   hack/servers.sh key      print the cache key
#   hack/servers.sh prune    remove cached builds of other keys (older pins)
set -euo pipefail

NAME=servers
PRUNE_WRITABLE=1
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
MOD_DIR=$HACK_DIR/servers

ARGO_MODULE=github.com/argoproj/argo-workflows/v3

# As hack/tools.sh: only the pinned modules, no go.work, no edits to the
# committed go.mod/go.sum, static binaries.
export GOWORK=off
export GOFLAGS="-mod=readonly -buildvcs=false"
export CGO_ENABLED=0

key() { hash_key "$HACK_DIR" 'servers/*/go.mod' 'servers/*/go.sum'; }

version() { go -C "$MOD_DIR/$1" list -m -f '{{.Version}}' "$2"; }

build_argo() {
	local v dl src osdir out
	v=$(version argo "$ARGO_MODULE")
	dl=$(go -C "$MOD_DIR/argo" mod download -json "$ARGO_MODULE" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	[[ -d $dl ]] || die "go mod download $ARGO_MODULE gave no directory"
	src=$WORK/src/argo-workflows
	rm -rf "$src"
	mkdir -p "$(dirname "$src")"
	cp -R "$dl" "$src"
	chmod -R u+w "$src"
	osdir=$src/workflow/executor/osspecific
	[[ -f $osdir/signal_linux.go ]] || cp "$osdir/signal_darwin.go" "$osdir/signal_linux.go"
	! grep -q '^//go:build' "$osdir/signal_linux.go" || die "signal_darwin.go has build tags; review the patch"
	mkdir -p "$src/ui/dist/app"
	printf '<!doctype html><html><head><base href="/"><title>argo server</title></head><body>This argo server was built without its web UI.</body></html>\n' >"$src/ui/dist/app/index.html"
	out=$(mktemp -d "$WORK/.build.XXXXXX")
	cp "$MOD_DIR/argo/go.mod" "$MOD_DIR/argo/go.sum" "$MOD_DIR/argo/tools.go" "$out/"
	go -C "$out" mod edit -replace "$ARGO_MODULE=$src"
	go -C "$out" build -trimpath -ldflags "-s -w -X $ARGO_MODULE.version=$v" -o "$out/bin/" "$ARGO_MODULE/cmd/argo"
	mv -f "$out/bin/argo" "$BIN/argo"
	rm -rf "$out" "$src"
}

build_versitygw() {
	local out
	out=$(mktemp -d "$WORK/.build.XXXXXX")
	go -C "$MOD_DIR/versitygw" build -trimpath -ldflags "-s -w" -o "$out/" github.com/versity/versitygw/cmd/versitygw
	mv -f "$out/versitygw" "$BIN/versitygw"
	rm -rf "$out"
}

build() {
	command -v go >/dev/null || die "go is not on PATH"
	take_work
	step "versitygw $(version versitygw github.com/versity/versitygw)" "~5 min" built versitygw -- build_versitygw
	step "argo $(version argo "$ARGO_MODULE")" "~5 min" built argo -- build_argo
	log "servers ready: $BIN"
}

main "$@"
