#!/usr/bin/env bash
# hack/ui-pictures.sh takes the README's pictures of a Spark DAG in the real
# Argo UI (docs/pictures/*.png). It builds Argo's web UI and `argo server`
# from the argo-workflows module this project pins (hack/servers/argo) and
# an argo-ui checkout, runs the DAG hack/ui-pictures/nightly-etl.yaml on the
# cluster of `make demo KEEP=1` (ingest succeeds, aggregate fails, report
# keeps running), and screenshots the UI in headless Chromium: a succeeded,
# a running and a failed node, and the failed node's inputs/outputs tab.
#
# It is not part of make test: Argo's UI needs argo-ui, a git dependency no
# package registry serves, so the checkout is a parameter. It must be the
# commit Argo's ui/package.json pins (54f36c72... for Argo v3.7.18), e.g.
#   git clone https://github.com/argoproj/argo-ui && git -C argo-ui checkout <commit>
# or that commit's `git archive` unpacked.
#
# Usage, with `make demo KEEP=1` running and the KUBECONFIG it printed
# exported:
#   hack/ui-pictures.sh ARGO_UI_CHECKOUT [OUT_DIR (default docs/pictures)]
#   hack/ui-pictures.sh --build-only ARGO_UI_CHECKOUT   (no cluster needed)
#
# Needs go, node (>= 20), npm (and the npm registry), curl and python3;
# installs Debian's chromium when no Chromium is on PATH (or set CHROMIUM).
# Builds go to
#   ${SPARKPLUG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkplug}/ui
# keyed by the Argo version and the checkout's content: cold, ~5 min for the
# web UI (yarn install, webpack) on 2 cores and up to ~10 more for argo's Go
# build (less when make servers has built argo), then instant. The
# workflow is deleted when the pictures are taken.
set -euo pipefail

HACK_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HACK_DIR/.." && pwd)
MOD_DIR=$HACK_DIR/servers/argo
CACHE_ROOT=${SPARKPLUG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkplug}
ARGO_MODULE=github.com/argoproj/argo-workflows/v3
# Where the demo runs workflows, and where Argo's controller and its
# ConfigMap are (e2e/framework.DefaultNamespace, e2e/argo.Namespace).
NS=e2e
ARGO_NS=argo
WF=nightly-etl
PUPPETEER=puppeteer-core@24.43.1

log() { printf '[ui-pictures] %s\n' "$*" >&2; }
die() {
	log "error: $*"
	exit 1
}
usage() {
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
}

build_only=false
if [[ ${1:-} == --build-only ]]; then
	build_only=true
	shift
fi
[[ $# -ge 1 && $# -le 2 && $1 != -* ]] || usage
[[ -f $1/package.json && -d $1/src ]] || die "$1 is not an argo-ui checkout"
ARGO_UI=$(cd "$1" && pwd -P)
command -v go >/dev/null || die "go is not on PATH"
command -v npm >/dev/null || die "npm is not on PATH"

export GOWORK=off GOFLAGS="-mod=readonly -buildvcs=false" CGO_ENABLED=0
V=$(go -C "$MOD_DIR" list -m -f '{{.Version}}' "$ARGO_MODULE")
dl=$(go -C "$MOD_DIR" mod download -json "$ARGO_MODULE")
MODULE_SRC=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' <<<"$dl")
MODULE_INFO=$(sed -n 's/^[[:space:]]*"Info": "\(.*\)",$/\1/p' <<<"$dl")
[[ -d $MODULE_SRC/ui ]] || die "go mod download $ARGO_MODULE gave no ui/"

# The argo-ui commit Argo's ui/package.json pins; a git checkout at another
# commit is refused (the UI's yarn.lock was made for that one).
pin=$(sed -n 's|.*"argo-ui": "[^"]*#\([0-9a-f]\{40\}\)".*|\1|p' "$MODULE_SRC/ui/package.json")
[[ -n $pin ]] || die "no argo-ui commit in $ARGO_MODULE@$V ui/package.json"
if head=$(git -C "$ARGO_UI" rev-parse --show-toplevel HEAD 2>/dev/null) && [[ $(sed -n 1p <<<"$head") == "$ARGO_UI" ]]; then
	[[ $(sed -n 2p <<<"$head") == "$pin" ]] || die "$ARGO_UI is at $(sed -n 2p <<<"$head"), Argo $V pins argo-ui $pin"
else
	log "$ARGO_UI is not a git checkout: taking it for argo-ui $pin, which Argo $V pins"
fi

# The build's cache: the Argo version and a hash of the checkout's files.
ui_key=$(cd "$ARGO_UI" && find . \( -name .git -o -name node_modules \) -prune -o -type f -print0 |
	LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-12)
WORK=$CACHE_ROOT/ui/$V-$ui_key
SRC=$WORK/argo-workflows
ARGO=$WORK/bin/argo
mkdir -p "$WORK"

# 1. The web UI, built in a writable copy of the pinned module (webpack
# copies ../api), with argo-ui from the checkout instead of its git URL.
if [[ ! -f $WORK/ui.done ]]; then
	log "building Argo $V's web UI in $WORK (yarn install, webpack: ~5 min cold)"
	start=$SECONDS
	rm -rf "$SRC" && mkdir -p "$(dirname "$SRC")"
	cp -R "$MODULE_SRC" "$SRC" && chmod -R u+w "$SRC"
	mkdir -p "$SRC/argo-ui"
	tar -C "$ARGO_UI" --exclude=./.git --exclude=./node_modules -cf - . | tar -C "$SRC/argo-ui" -xf -
	(
		cd "$SRC/ui"
		sed -i 's|"argo-ui": "[^"]*"|"argo-ui": "file:../argo-ui"|' package.json
		# The lock entry of argo-ui, renamed to the file dependency, without
		# its resolved git URL.
		awk '/^"?argo-ui@/ {print "\"argo-ui@file:../argo-ui\":"; skip=1; next}
			skip && /^  resolved / {next}
			/^[^ ]/ {skip=0}
			{print}' yarn.lock >yarn.lock.new && mv yarn.lock.new yarn.lock
		grep -q '^"argo-ui@file:../argo-ui":$' yarn.lock || die "no argo-ui entry in ui/yarn.lock to point at the checkout"
		npx -y yarn@1.22.22 install --ignore-engines --non-interactive --network-timeout 600000 >"$WORK/yarn.log" 2>&1 ||
			die "yarn install failed: $WORK/yarn.log"
		NODE_ENV=production NODE_OPTIONS=--max-old-space-size=4096 node_modules/.bin/webpack --mode production >"$WORK/webpack.log" 2>&1 ||
			die "webpack failed: $WORK/webpack.log"
	)
	[[ -f $SRC/ui/dist/app/index.html ]] || die "webpack wrote no ui/dist/app/index.html: $WORK/webpack.log"
	# Only dist/app is needed from here on (argo embeds it).
	rm -rf "$SRC/ui/node_modules"
	touch "$WORK/ui.done"
	log "web UI built in $(((SECONDS - start) / 60)) min"
fi

# 2. argo (for argo server) embedding that UI, as hack/servers.sh builds it
# with a placeholder page: signal_linux.go restored (module zips drop that
# git symlink). With the release's commit and date from the module proxy's
# .info, the UI shows the version as Argo's own build does ("v3.7.18").
ldflags="-s -w -X $ARGO_MODULE.version=$V"
commit=$(sed -n 's/.*"Hash":"\([0-9a-f]\{40\}\)".*/\1/p' "$MODULE_INFO" 2>/dev/null || true)
date=$(sed -n 's/.*"Time":"\([^"]*\)".*/\1/p' "$MODULE_INFO" 2>/dev/null || true)
[[ -z $date ]] || ldflags+=" -X $ARGO_MODULE.buildDate=$date"
[[ -z $commit ]] || ldflags+=" -X $ARGO_MODULE.gitCommit=$commit -X $ARGO_MODULE.gitTag=$V -X $ARGO_MODULE.gitTreeState=clean"
if [[ ! -x $ARGO || $WORK/ui.done -nt $ARGO || $(cat "$ARGO.ldflags" 2>/dev/null) != "$ldflags" ]]; then
	log "building argo $V with the web UI (up to ~10 min cold)"
	start=$SECONDS
	osdir=$SRC/workflow/executor/osspecific
	[[ -f $osdir/signal_linux.go ]] || cp "$osdir/signal_darwin.go" "$osdir/signal_linux.go"
	mod=$(mktemp -d "$WORK/.build.XXXXXX")
	cp "$MOD_DIR/go.mod" "$MOD_DIR/go.sum" "$MOD_DIR/tools.go" "$mod/"
	go -C "$mod" mod edit -replace "$ARGO_MODULE=$SRC"
	go -C "$mod" build -trimpath -ldflags "$ldflags" -o "$mod/argo" "$ARGO_MODULE/cmd/argo"
	mkdir -p "$(dirname "$ARGO")" && mv -f "$mod/argo" "$ARGO" && rm -rf "$mod"
	printf '%s\n' "$ldflags" >"$ARGO.ldflags"
	log "argo built in $(((SECONDS - start) / 60)) min: $ARGO"
fi
if $build_only; then
	log "built: $ARGO"
	exit 0
fi

# 3. The cluster, a browser and puppeteer.
OUT=${2:-$REPO/docs/pictures}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
[[ -n ${KUBECONFIG:-} ]] || die "export the KUBECONFIG that make demo KEEP=1 printed"
command -v kubectl >/dev/null || PATH=$(bash "$HACK_DIR/tools.sh" bindir):$PATH
command -v kubectl >/dev/null || die "no kubectl: run make tools (or make demo KEEP=1)"
kubectl get namespace "$NS" "$ARGO_NS" >/dev/null || die "no namespaces $NS and $ARGO_NS: is make demo KEEP=1 running?"
CHROMIUM=${CHROMIUM:-$(command -v chromium chromium-browser google-chrome 2>/dev/null | head -1 || true)}
if [[ -z $CHROMIUM ]]; then
	log "installing Debian's chromium"
	sudo_=""
	[[ $(id -u) == 0 ]] || sudo_=sudo
	$sudo_ apt-get update -qq && $sudo_ apt-get install -y -qq chromium >/dev/null
	CHROMIUM=$(command -v chromium)
fi
SHOTS=$CACHE_ROOT/ui/shots
if [[ ! -f $SHOTS/.${PUPPETEER//\//_} ]]; then
	log "installing $PUPPETEER into $SHOTS"
	mkdir -p "$SHOTS" && npm --prefix "$SHOTS" install --no-save --no-audit --no-fund --silent "$PUPPETEER" >/dev/null
	touch "$SHOTS/.${PUPPETEER//\//_}"
fi

# 4. The DAG: ingest succeeds, aggregate fails (exit 1), report runs until
# its message shows the elapsed time (sparkplug's --progress-interval, 30 s).
cleanup() {
	[[ -z ${server:-} ]] || kill "$server" 2>/dev/null || true
	kubectl -n "$NS" delete workflow "$WF" --ignore-not-found --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT
kubectl -n "$NS" delete workflow "$WF" --ignore-not-found --wait=true >/dev/null
kubectl -n "$NS" create -f "$HACK_DIR/ui-pictures/nightly-etl.yaml" >/dev/null
log "waiting for the DAG: ingest Succeeded, aggregate Failed, report Running with its elapsed time (~40 s)"
nodes=""
for _ in $(seq 1 120); do
	nodes=$(kubectl -n "$NS" get workflow "$WF" -o go-template='{{range .status.nodes}}{{.displayName}}={{.phase}}: {{with .message}}{{.}}{{end}}{{"\n"}}{{end}}' 2>/dev/null || true)
	if grep -q '^ingest=Succeeded' <<<"$nodes" && grep -q '^aggregate=Failed' <<<"$nodes" &&
		grep -q '^report=Running: RUNNING .*, [0-9]' <<<"$nodes"; then
		break
	fi
	sleep 2
done
grep -q '^report=Running: RUNNING .*, [0-9]' <<<"$nodes" || die "the DAG did not get there:"$'\n'"$nodes"
log "the DAG:"$'\n'"$nodes"

# 5. argo server (no first-run, feedback or new-version dialogs) and the
# screenshots.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
FIRST_TIME_USER_MODAL=false FEEDBACK_MODAL=false NEW_VERSION_MODAL=false \
	"$ARGO" server --kubeconfig "$KUBECONFIG" --auth-mode=server --secure=false --port="$port" \
	--namespaced --namespace="$ARGO_NS" --managed-namespace="$NS" >"$WORK/argo-server.log" 2>&1 &
server=$!
for _ in $(seq 1 60); do
	curl -fsS "http://127.0.0.1:$port/api/v1/version" >/dev/null 2>&1 && break
	kill -0 "$server" 2>/dev/null || die "argo server exited: $WORK/argo-server.log"
	sleep 1
done
node_id() {
	kubectl -n "$NS" get workflow "$WF" \
		-o go-template="{{range \$id, \$n := .status.nodes}}{{if eq \$n.displayName \"$1\"}}{{\$id}}{{end}}{{end}}"
}
CHROMIUM=$CHROMIUM NODE_PATH=$SHOTS/node_modules node "$HACK_DIR/ui-pictures/shoot.js" \
	"http://127.0.0.1:$port" "$NS" "$WF" "$OUT" \
	succeeded-node.png="$(node_id ingest)" \
	running-node.png="$(node_id report)" \
	failed-node.png="$(node_id aggregate)" \
	outputs.png="$(node_id aggregate):inputs-outputs"
log "pictures in $OUT"
