#!/usr/bin/env bash
# hack/node.sh prepares the e2e real node (e2e/node): a real kubelet with
# containerd and runc beside KWOK's simulated node.
#
# - Debian packages: containerd, runc, containernetworking-plugins, iptables
#   and nftables (nft: teardown deletes the tables iptables-nft creates on
#   first use), installed with apt-get when missing (needs root or sudo).
# - Binaries, static, built into a cache outside the clone:
#     kubelet  from k8s.io/kubernetes at the version hack/tools/kubernetes
#              pins (module hack/node/kubelet, with the same replaces);
#     coredns  CoreDNS v1.15.0 with the plugins the node uses (module
#              hack/node/coredns; it needs newer k8s.io modules than the
#              kubelet, hence a module of its own);
#     pause    the sandbox container's binary (hack/node/pause); e2e/node
#              packages it as the pause image.
#
#   ${SPARKPLUG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkplug}/node/<key>/bin
#
# key hashes the pins, the pause source and this script's recipe (hack/lib.sh).
#
# Usage:
#   hack/node.sh build    install the packages and build whatever is missing
#                         (cold: ~11 min alone, ~2 min after hack/tools.sh
#                         build, whose build cache has most of the kubelet;
#                         warm: seconds)
#   hack/node.sh debs     install the Debian packages only
#   hack/node.sh bindir   print the bin dir (whether or not it is built yet)
#   hack/node.sh key      print the cache key
#   hack/node.sh prune    remove cached builds of other keys
set -euo pipefail

NAME=node
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
MOD_DIR=$HACK_DIR/node

# The Debian packages the node needs.
PACKAGES=(containerd runc containernetworking-plugins iptables nftables)

# As hack/tools.sh: only the pinned modules, no go.work, no edits to the
# committed go.mod/go.sum, static binaries.
export GOWORK=off
export GOFLAGS="-mod=readonly -buildvcs=false"
export CGO_ENABLED=0

key() { hash_key "$HACK_DIR" 'node/*/go.mod' 'node/*/go.sum' 'node/*/*.go'; }

version() { go -C "$MOD_DIR/$1" list -m -f '{{.Version}}' "$2"; }

debs() {
	local need=() p sudo=() start=$SECONDS
	for p in "${PACKAGES[@]}"; do
		[[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == "install ok installed" ]] || need+=("$p")
	done
	[[ ${#need[@]} -eq 0 ]] && return
	[[ $(id -u) -eq 0 ]] || sudo=(sudo)
	log "installing ${need[*]}"
	"${sudo[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
	log "installed in $((SECONDS - start))s"
}

# go_build builds one package of a module into a temp dir and moves the
# binary into the bin dir (an atomic rename: never a half-written binary).
# Usage: go_build <module dir> <ldflags> <binary> <package>
go_build() {
	local moddir=$1 ldflags=$2 bin=$3 pkg=$4 out
	out=$(mktemp -d "$WORK/.build.XXXXXX")
	go -C "$moddir" build -trimpath -ldflags "-s -w $ldflags" -o "$out/$bin" "$pkg"
	mv -f "$out/$bin" "$BIN/$bin"
	rm -rf "$out"
}

build_kubelet() {
	local v major minor ldflags
	v=$(version kubelet k8s.io/kubernetes)
	[[ $v == "$(go -C "$HACK_DIR/tools/kubernetes" list -m -f '{{.Version}}' k8s.io/kubernetes)" ]] ||
		die "hack/node/kubelet pins k8s.io/kubernetes $v, hack/tools/kubernetes another version"
	minor=${v#v*.}
	minor=${minor%%.*}
	major=${v#v}
	major=${major%%.*}
	ldflags="-X k8s.io/component-base/version.gitVersion=$v"
	ldflags+=" -X k8s.io/component-base/version.gitMajor=$major"
	ldflags+=" -X k8s.io/component-base/version.gitMinor=$minor"
	ldflags+=" -X k8s.io/component-base/version.gitTreeState=clean"
	go_build "$MOD_DIR/kubelet" "$ldflags" kubelet k8s.io/kubernetes/cmd/kubelet
}

build_coredns() {
	go_build "$MOD_DIR/coredns" "" coredns .
}

build_pause() {
	go_build "$HACK_DIR/.." "" pause ./hack/node/pause
}

build() {
	local start=$SECONDS
	command -v go >/dev/null || die "go is not on PATH"
	debs
	take_work
	step "pause" "seconds" built pause -- build_pause
	step "coredns $(version coredns github.com/coredns/coredns)" "~3 min" built coredns -- build_coredns
	step "kubelet $(version kubelet k8s.io/kubernetes)" "~7 min" built kubelet -- build_kubelet
	log "node ready in $((SECONDS - start))s: $BIN"
}

case ${1:-} in
debs) debs ;;
*) main "$@" ;;
esac
