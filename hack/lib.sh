# hack/lib.sh is what the build scripts of hack/ (tools.sh, servers.sh,
# helm.sh, kueue.sh, operator.sh, node.sh) share: the cache and its keys,
# logging, the build lock, a build step, pruning and the usage text. A
# script sets NAME (its log prefix and its folder in the cache) and
# sources it after `set -euo pipefail`:
#
#   NAME=tools
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# then defines key, which prints its cache key: hash_key over the inputs
# of its build, its pin files and its recipe (the text of the functions
# it defines, and its builds' Go environment). Nothing here changes what
# a build makes, so no key hashes this file, nor a script's comments and
# usage: editing them rebuilds nothing.

HACK_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HACK_DIR/.." && pwd)
CACHE_ROOT=${SPARKPLUG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkplug}
# SCRIPT is the script that sourced this file, whose header is its usage.
SCRIPT=${BASH_SOURCE[1]}

log() { printf '[%s] %s\n' "$NAME" "$*" >&2; }
die() {
	log "error: $*"
	exit 1
}

# hash_key prints a cache key: a hash of the hashes of the pin files,
# named relative to dir, and of the script's recipe. Usage: hash_key <dir>
# <files or patterns...>; a pattern (quoted) is expanded in dir.
hash_key() {
	local dir=$1
	shift
	{
		(
			cd "$dir"
			# shellcheck disable=SC2048,SC2086 # the patterns expand here
			sha256sum $*
		)
		recipe | sha256sum
	} | sha256sum | cut -c1-12
}

# recipe prints what of the sourcing script makes what its builds make:
# each function defined in the script's own file (not this file's), as
# bash parsed it (declare -f: no comments, one layout), and the Go
# environment its builds run with. A build input a script keeps outside
# its functions belongs here.
recipe() {
	local f name line file
	shopt -s extdebug # declare -F then names a function's file
	for f in $(compgen -A function | LC_ALL=C sort); do
		read -r name line file < <(declare -F "$f")
		[[ $file != "$SCRIPT" ]] || declare -f "$f"
	done
	shopt -u extdebug
	printf 'GOWORK=%s GOFLAGS=%s CGO_ENABLED=%s\n' "${GOWORK-}" "${GOFLAGS-}" "${CGO_ENABLED-}"
}

work_dir() { printf '%s/%s/%s\n' "$CACHE_ROOT" "$NAME" "$(key)"; }
bin_dir() { printf '%s/bin\n' "$(work_dir)"; }

# take_work sets WORK (the cache key's folder) and BIN (its bin dir), makes
# them and takes the build lock: one build per cache key at a time, a
# second caller waits, then finds everything up to date. It removes what an
# interrupted build left.
take_work() {
	WORK=$(work_dir)
	BIN=$WORK/bin
	mkdir -p "$BIN"
	if command -v flock >/dev/null; then
		exec 9>"$WORK/.lock"
		if ! flock -n 9; then
			log "waiting for another build of $WORK"
			flock 9
		fi
	fi
	rm -rf "$WORK"/.build.* # left by an interrupted build
}

# built succeeds if every named binary is in the bin dir.
built() {
	local b
	for b in "$@"; do
		[[ -x $BIN/$b ]] || return 1
	done
}

# step runs one build step unless its output is up to date, with progress.
# Usage: step <label> <cold estimate> <test...> -- <command...>, where the
# test is a command that succeeds when the output is up to date.
step() {
	local label=$1 cold=$2 test=() start
	shift 2
	while [[ $1 != -- ]]; do
		test+=("$1")
		shift
	done
	shift
	if "${test[@]}"; then
		log "$label: up to date"
		return
	fi
	log "building $label... (cold: $cold)"
	start=$SECONDS
	"$@"
	log "built $label in $((SECONDS - start))s"
}

# prune removes every cached build but the current key's; made writable
# first where PRUNE_WRITABLE is set (a module copy comes read-only from the
# module cache).
prune() {
	local current d
	current=$(key)
	for d in "$CACHE_ROOT/$NAME"/*/; do
		[[ -d $d && $(basename "$d") != "$current" ]] || continue
		log "removing $d"
		[[ -z ${PRUNE_WRITABLE:-} ]] || chmod -R u+w "$d"
		rm -rf "$d"
	done
}

# usage prints the script's header, up to `set -euo pipefail`, and fails.
usage() {
	sed -n '2,/^set -euo/p' "$SCRIPT" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
}

# main runs the command every script has: build (the script's own
# function), bindir, key or prune; anything else prints the usage.
main() {
	case ${1:-} in
	build) build ;;
	bindir) bin_dir ;;
	key) key ;;
	prune) prune ;;
	*) usage ;;
	esac
}
