#!/usr/bin/env bash
# hack/debs.sh installs the Debian packages the tests need that the machine
# lacks: zsh and fish, whose completion scripts (sparkplug completion) the
# unit tests run. make test-unit runs it first; it does nothing when both
# are there. Needs root (or sudo) and the Debian package archive.
set -euo pipefail

need=()
for cmd in zsh fish; do
	command -v "$cmd" >/dev/null 2>&1 || need+=("$cmd")
done
[[ ${#need[@]} -eq 0 ]] && exit 0

sudo=()
[[ $(id -u) -eq 0 ]] || sudo=(sudo)
printf '[debs] installing %s\n' "${need[*]}" >&2
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
