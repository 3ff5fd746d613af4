#!/usr/bin/env bash
# hack/tools.sh builds the binaries of the test control plane (etcd, the
# Kubernetes control plane and kubectl, KWOK, the Argo workflow-controller and
# argoexec) from the Go modules pinned in hack/tools/<name>/{go.mod,go.sum}.
#
# Binaries go to a cache outside the clone, keyed by a hash of those pins and
# of this script's recipe (its functions and Go environment, hack/lib.sh), so
# fresh clones and CI reuse them:
#
#   ${SPARKPLUG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkplug}/tools/<key>/bin
#
# Usage:
#   hack/tools.sh build    build whatever is missing (cold: ~15 min, warm: seconds)
#   hack/tools.sh bindir   print the bin dir (whether or not it is built yet)
#   hack/tools.sh key      print the cache key
#   hack/tools.sh prune    remove cached builds of other keys (older pins)
set -euo pipefail

NAME=tools
PRUNE_WRITABLE=1 # the argo source copy comes read-only from the module cache
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
TOOLS_DIR=$HACK_DIR/tools

ARGO_MODULE=github.com/argoproj/argo-workflows/v3

# Builds use only the pinned modules: no go.work, no edits to the committed
# go.mod/go.sum, static binaries, sequential builds (the machine may be small).
export GOWORK=off
export GOFLAGS="-mod=readonly -buildvcs=false"
export CGO_ENABLED=0

# key hashes every input of the build: the pins and this script's recipe.
key() { hash_key "$HACK_DIR" 'tools/*/go.mod' 'tools/*/go.sum'; }

# version prints the version that a scratch module pins for a module.
version() {
	go -C "$TOOLS_DIR/$1" list -m -f '{{.Version}}' "$2"
}

# install_from moves binaries built into a temp dir into the bin dir; each
# rename is atomic, so the bin dir never holds a half-written binary.
install_from() {
	local dir=$1 b
	shift
	for b in "$@"; do
		[[ -x $dir/$b ]] || die "$b was not built"
		mv -f "$dir/$b" "$BIN/$b"
	done
	rm -rf "$dir"
}

# go_build builds packages of a scratch module into a fresh temp dir and
# installs the named binaries. Usage: go_build <module dir> <ldflags> <bins> -- <pkgs>
go_build() {
	local moddir=$1 ldflags=$2 bins=() pkgs=() out
	shift 2
	while [[ $1 != -- ]]; do
		bins+=("$1")
		shift
	done
	shift
	pkgs=("$@")
	out=$(mktemp -d "$WORK/.build.XXXXXX")
	# -s -w: no symbol table or DWARF; these are tools, not code under test.
	go -C "$moddir" build -trimpath -ldflags "-s -w $ldflags" -o "$out/" "${pkgs[@]}"
	install_from "$out" "${bins[@]}"
}

build_etcd() {
	local out
	# The etcd main package is the module root, go.etcd.io/etcd/server/v3.
	out=$(mktemp -d "$WORK/.build.XXXXXX")
	go -C "$TOOLS_DIR/etcd" build -trimpath -ldflags "-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3
	install_from "$out" etcd
}

build_kubernetes() {
	local v major minor ldflags
	v=$(version kubernetes k8s.io/kubernetes)
	minor=${v#v*.}
	minor=${minor%%.*}
	major=${v#v}
	major=${major%%.*}
	ldflags="-X k8s.io/component-base/version.gitVersion=$v"
	ldflags+=" -X k8s.io/component-base/version.gitMajor=$major"
	ldflags+=" -X k8s.io/component-base/version.gitMinor=$minor"
	ldflags+=" -X k8s.io/component-base/version.gitTreeState=clean"
	go_build "$TOOLS_DIR/kubernetes" "$ldflags" \
		kube-apiserver kube-controller-manager kube-scheduler kubectl -- \
		k8s.io/kubernetes/cmd/kube-apiserver \
		k8s.io/kubernetes/cmd/kube-controller-manager \
		k8s.io/kubernetes/cmd/kube-scheduler \
		k8s.io/kubernetes/cmd/kubectl
}

build_kwok() {
	go_build "$TOOLS_DIR/kwok" "" kwok -- sigs.k8s.io/kwok/cmd/kwok
}

# argo_source prints a writable, patched copy of the argo-workflows module,
# made once per cache key from the checksum-verified module download.
argo_source() {
	local src=$WORK/src/argo-workflows dl osdir
	if [[ -f $src/.sparkplug-patched ]]; then
		printf '%s\n' "$src"
		return
	fi
	dl=$(go -C "$TOOLS_DIR/argo" mod download -json "$ARGO_MODULE" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	[[ -d $dl ]] || die "go mod download $ARGO_MODULE gave no directory"
	rm -rf "$src" "$src.tmp"
	mkdir -p "$(dirname "$src")"
	cp -R "$dl" "$src.tmp"
	chmod -R u+w "$src.tmp"

	# signal_linux.go is a git symlink to signal_darwin.go, dropped from
	# module zips; the darwin file has no build tags beyond its name.
	osdir=$src.tmp/workflow/executor/osspecific
	[[ -f $osdir/signal_linux.go ]] || cp "$osdir/signal_darwin.go" "$osdir/signal_linux.go"
	! grep -q '^//go:build' "$osdir/signal_linux.go" || die "signal_darwin.go has build tags; review the patch"

	# The controller serves pprof on :6060, all interfaces: bind loopback.
	sed -i 's/ListenAndServe(":6060"/ListenAndServe("127.0.0.1:6060"/' "$src.tmp/cmd/workflow-controller/main.go"
	grep -q 'ListenAndServe("127.0.0.1:6060"' "$src.tmp/cmd/workflow-controller/main.go" ||
		die "could not bind the workflow-controller pprof listener to 127.0.0.1"

	touch "$src.tmp/.sparkplug-patched"
	mv "$src.tmp" "$src"
	printf '%s\n' "$src"
}

build_argo() {
	local v src mod ldflags
	v=$(version argo "$ARGO_MODULE")
	src=$(argo_source)
	# A copy of the scratch module whose replace points at the patched source.
	mod=$WORK/mod/argo
	rm -rf "$mod"
	mkdir -p "$mod"
	cp "$TOOLS_DIR/argo/go.mod" "$TOOLS_DIR/argo/go.sum" "$TOOLS_DIR/argo/tools.go" "$mod/"
	go -C "$mod" mod edit -replace "$ARGO_MODULE=$src"
	ldflags="-X $ARGO_MODULE.version=$v"
	go_build "$mod" "$ldflags" workflow-controller argoexec -- \
		"$ARGO_MODULE/cmd/workflow-controller" "$ARGO_MODULE/cmd/argoexec"
}

build() {
	local start=$SECONDS
	command -v go >/dev/null || die "go is not on PATH"
	take_work
	log "bin dir: $BIN"
	step "etcd $(version etcd go.etcd.io/etcd/server/v3)" "~1 min" built etcd -- build_etcd
	step "kube-apiserver, kube-controller-manager, kube-scheduler, kubectl $(version kubernetes k8s.io/kubernetes)" "~5 min" \
		built kube-apiserver kube-controller-manager kube-scheduler kubectl -- build_kubernetes
	step "kwok $(version kwok sigs.k8s.io/kwok)" "~2 min" built kwok -- build_kwok
	step "workflow-controller, argoexec $(version argo "$ARGO_MODULE")" "~5 min" built workflow-controller argoexec -- build_argo
	log "all tools ready in $((SECONDS - start))s: $BIN"
}

main "$@"
