#!/usr/bin/env bash
# hack/argo.sh builds the workflow-controller and argoexec of another Argo
# Workflows version than the one make test runs (hack/tools.sh pins that),
# for `make e2e ARGO=VERSION` and `make e2e-matrix`, from the scratch module
# pinned in hack/argo/VERSION/{go.mod,go.sum}. It is apart from hack/tools.sh
# so that adding a version never changes the test control plane's cache key.
#
# The binaries go to a cache outside the clone, keyed by a hash of the pins
# and of this script:
#
#   ${SPARKPLUG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkplug}/argo/<key>/bin
#
# As hack/tools.sh does, it builds from a patched copy of the module:
# workflow/executor/osspecific/signal_linux.go (a git symlink dropped from
# module zips) restored, the controller's pprof server bound to 127.0.0.1.
#
# Usage:
#   hack/argo.sh versions          the versions pinned here
#   hack/argo.sh build VERSION     build that version if it is missing (cold: ~5 min)
#   hack/argo.sh bindir VERSION    print its bin dir
#   hack/argo.sh moddir VERSION    print the module's directory (CRDs, RBAC examples)
set -euo pipefail

HACK_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE_ROOT=${SPARKPLUG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkplug}

export GOWORK=off
export GOFLAGS="-mod=readonly -buildvcs=false"
export CGO_ENABLED=0

log() { printf '[argo] %s\n' "$*" >&2; }
die() {
	log "error: $*"
	exit 1
}

mod_dir() {
	local d=$HACK_DIR/argo/$1
	[[ -f $d/go.mod ]] || die "no Argo $1 pinned (hack/argo/$1/go.mod); pinned: $(versions | tr '\n' ' ')"
	printf '%s\n' "$d"
}

# module is the Go module path of a version: /v3 up to v3, /v4 from v4.0.2.
module() { printf 'github.com/argoproj/argo-workflows/%s\n' "${1%%.*}"; }

versions() { (cd "$HACK_DIR/argo" && ls -d v*/ | tr -d /); }

key() {
	(
		cd "$HACK_DIR"
		sha256sum argo.sh "argo/$1/go.mod" "argo/$1/go.sum"
	) | sha256sum | cut -c1-12
}

work_dir() { printf '%s/argo/%s\n' "$CACHE_ROOT" "$(key "$1")"; }
bin_dir() { printf '%s/bin\n' "$(work_dir "$1")"; }

module_source() {
	go -C "$(mod_dir "$1")" mod download -json "$(module "$1")" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}

build() {
	local v=$1 start=$SECONDS work bin mod m dl src osdir out
	mod=$(mod_dir "$v")
	m=$(module "$v")
	work=$(work_dir "$v")
	bin=$work/bin
	mkdir -p "$bin"
	if command -v flock >/dev/null; then
		exec 9>"$work/.lock"
		flock 9
	fi
	if [[ -x $bin/workflow-controller && -x $bin/argoexec && -x $bin/argo ]]; then
		log "Argo $v: up to date ($bin)"
		return
	fi
	log "building Argo $v into $bin... (cold: ~5 min)"
	dl=$(module_source "$v")
	[[ -d $dl ]] || die "go mod download $m@$v gave no directory"
	src=$work/src
	rm -rf "$src" "$work"/.build.*
	cp -R "$dl" "$src"
	chmod -R u+w "$src"
	# workflow/executor/os-specific up to v3.6, osspecific from v3.7.
	osdir=$src/workflow/executor/osspecific
	[[ -d $osdir ]] || osdir=$src/workflow/executor/os-specific
	[[ -f $osdir/signal_linux.go ]] || cp "$osdir/signal_darwin.go" "$osdir/signal_linux.go"
	! grep -q '^//go:build' "$osdir/signal_linux.go" || die "signal_darwin.go has build tags; review the patch"
	sed -i 's/ListenAndServe(":6060"/ListenAndServe("127.0.0.1:6060"/' "$src/cmd/workflow-controller/main.go"
	grep -q 'ListenAndServe("127.0.0.1:6060"' "$src/cmd/workflow-controller/main.go" ||
		die "could not bind the workflow-controller pprof listener to 127.0.0.1"
	# The argo CLI of the same version (`argo retry` formulates the retry
	# itself): it embeds the web UI's build output, which module zips lack,
	# so ui/dist/app gets one placeholder page (the tests never open it).
	mkdir -p "$src/ui/dist/app"
	printf '<!doctype html><title>argo</title>\n' >"$src/ui/dist/app/index.html"
	out=$(mktemp -d "$work/.build.XXXXXX")
	cp "$mod/go.mod" "$mod/go.sum" "$mod/tools.go" "$out/"
	go -C "$out" mod edit -replace "$m=$src"
	go -C "$out" build -trimpath -ldflags "-s -w -X $m.version=$v" -o "$out/bin/" "$m/cmd/workflow-controller" "$m/cmd/argoexec" "$m/cmd/argo"
	mv -f "$out/bin/workflow-controller" "$out/bin/argoexec" "$out/bin/argo" "$bin/"
	rm -rf "$out" "$src"
	log "built Argo $v in $((SECONDS - start))s: $bin"
}

case ${1:-} in
versions) versions ;;
build) build "${2:?VERSION}" ;;
bindir) bin_dir "${2:?VERSION}" ;;
moddir) module_source "${2:?VERSION}" ;;
*)
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
	;;
esac
