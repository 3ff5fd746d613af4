#!/usr/bin/env bash
# hack/operator.sh builds what the Spark operator column of the end-to-end
# benchmark (make bench-e2e) runs: the Kubeflow Spark operator's binary, from
# the module pinned in hack/operator/{go.mod,go.sum} (its controller runs as
# `spark-operator controller start`; the webhook, another subcommand, stays
# off), and a Spark home for it whose bin/spark-submit is the project's fake
# (plugin/submit/testdata/fakesubmit), with a fake.json that has it create
# the driver pod, its ConfigMap and Service at once, as Spark's
# spark-submit would without a JVM to start. The operator runs spark-submit
# from $SPARK_HOME/bin; no Spark distribution nor Java is installable here.
#
# It is apart from hack/tools.sh and hack/servers.sh so that pinning or
# bumping the operator never changes their cache keys (and rebuilds them).
# Everything goes to a cache outside the clone, keyed by a hash of this
# script, the pins, and the fake's sources and module files:
#
#   ${SPARKPLUG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkplug}/operator/<key>/bin/spark-operator
#   ${SPARKPLUG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkplug}/operator/<key>/spark-home/bin/spark-submit
#
# Usage:
#   hack/operator.sh build      build whatever is missing (cold: ~3 min, warm: instant)
#   hack/operator.sh bindir     print the bin dir (whether or not it is built yet)
#   hack/operator.sh sparkhome  print the fake Spark home (SPARK_HOME of the operator)
#   hack/operator.sh key        print the cache key
#   hack/operator.sh prune      remove cached builds of other keys (older pins)
set -euo pipefail

NAME=operator
PRUNE_WRITABLE=1
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
MOD_DIR=$HACK_DIR/operator
FAKE_DIR=plugin/submit/testdata/fakesubmit

OPERATOR_MODULE=github.com/kubeflow/spark-operator/v2

# As hack/tools.sh: only the pinned modules, no go.work, no edits to the
# committed go.mod/go.sum, static binaries.
export GOWORK=off
export GOFLAGS="-mod=readonly -buildvcs=false"
export CGO_ENABLED=0

# key hashes the pins and the fake spark-submit: its sources, and the
# repository's go.mod/go.sum it is built with; and this script's recipe
# (hack/lib.sh).
key() { hash_key "$ROOT" hack/operator/go.mod hack/operator/go.sum "$FAKE_DIR/*.go" go.mod go.sum; }
spark_home() { printf '%s/spark-home\n' "$(work_dir)"; }

version() { go -C "$MOD_DIR" list -m -f '{{.Version}}' "$OPERATOR_MODULE"; }

# build_operator builds cmd/operator as upstream's Makefile does (its
# version in component-base's gitVersion, which `spark-operator version`
# and the controller's first log lines print), from the pinned module with
# upstream's replace directives (hack/operator/go.mod).
build_operator() {
	local v out
	v=$(version)
	out=$(mktemp -d "$WORK/.build.XXXXXX")
	go -C "$MOD_DIR" build -trimpath -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$v" \
		-o "$out/spark-operator" "$OPERATOR_MODULE/cmd/operator"
	mv -f "$out/spark-operator" "$BIN/spark-operator"
	rm -rf "$out"
}

# build_spark_home builds the fake spark-submit into a Spark home of its
# own; fake.json (`create`) has it create the driver pod through
# $KUBECONFIG, which the operator passes on.
build_spark_home() {
	local home=$WORK/spark-home out
	out=$(mktemp -d "$WORK/.build.XXXXXX")
	go -C "$ROOT" build -trimpath -ldflags "-s -w" -o "$out/spark-submit" "./$FAKE_DIR"
	mkdir -p "$home/bin"
	printf '{"create": true}\n' >"$home/fake.json"
	mv -f "$out/spark-submit" "$home/bin/spark-submit"
	rm -rf "$out"
}

build() {
	command -v go >/dev/null || die "go is not on PATH"
	take_work
	step "spark-operator $(version)" "~3 min" built spark-operator -- build_operator
	step "the fake spark-submit ($FAKE_DIR)" "~30 s" test -x "$WORK/spark-home/bin/spark-submit" -- build_spark_home
	log "spark-operator ready: $BIN; SPARK_HOME=$WORK/spark-home"
}

case ${1:-} in
sparkhome) spark_home ;;
*) main "$@" ;;
esac
