#!/usr/bin/env bash
# hack/vuln.sh checks sparkplug's code for known vulnerabilities offline:
# govulncheck against a database built from a pinned copy of the Go
# vulnerability database (the golang.org/x/vulndb module's data/osv, turned
# into govulncheck's v1 database layout by vulndb's own indexdb), with no
# network access to vuln.go.dev. The pins are in hack/vuln/go.mod: bump
# golang.org/x/vulndb there to scan against newer reports.
#
# govulncheck's findings are triaged by hack/vuln/triage: every
# vulnerability the code calls must be fixed (bump the module) or listed in
# hack/vuln/accepted.txt with the reason it does not apply or cannot be
# fixed here; anything else fails.
#
# Tools and database go to a cache outside the clone, keyed by a hash of the
# pins, the triage program, this script and the Go version:
#
#   ${SPARKPLUG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkplug}/vuln/<key>/{bin,db}
#
# Usage:
#   hack/vuln.sh         build what is missing (cold ~1 min), then scan (~30 s)
#   hack/vuln.sh build   build the tools and the database only
set -euo pipefail

HACK_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HACK_DIR/.." && pwd)
MOD_DIR=$HACK_DIR/vuln
CACHE_ROOT=${SPARKPLUG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkplug}
GO=${GO:-go}

export GOWORK=off
export GOFLAGS="-mod=readonly -buildvcs=false"
export CGO_ENABLED=0

log() { printf '[vuln] %s\n' "$*" >&2; }

# key hashes the pins, the triage program, this script and the Go version:
# govulncheck reports the standard library of the Go it runs with, so a new
# toolchain is a new scan.
key() {
	(cd "$HACK_DIR" && cat vuln.sh vuln/go.mod vuln/go.sum vuln/triage/*.go && "$GO" env GOVERSION) | sha256sum | cut -c1-12
}

DIR=$CACHE_ROOT/vuln/$(key)

build() {
	if [[ -x $DIR/bin/govulncheck && -x $DIR/bin/indexdb && -x $DIR/bin/triage && -f $DIR/db/index/db.json ]]; then
		return
	fi
	log "building govulncheck, indexdb and triage into $DIR"
	mkdir -p "$DIR"
	tmp=$(mktemp -d "$DIR/.build.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	(cd "$MOD_DIR" && "$GO" build -trimpath -o "$tmp/bin/" golang.org/x/vuln/cmd/govulncheck golang.org/x/vulndb/cmd/indexdb ./triage)
	vulndb=$(cd "$MOD_DIR" && "$GO" mod download -json golang.org/x/vulndb | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	[[ -d $vulndb/data/osv ]] || { log "no data/osv in $vulndb"; exit 1; }
	log "database from $(ls "$vulndb/data/osv" | wc -l) reports of golang.org/x/vulndb"
	"$tmp/bin/indexdb" -vulns "$vulndb/data/osv" -out "$tmp/db"
	rm -rf "$DIR/bin" "$DIR/db"
	mv "$tmp/bin" "$DIR/bin"
	mv "$tmp/db" "$DIR/db"
}

build
[[ ${1:-} == build ]] && exit 0

(cd "$MOD_DIR" && "$GO" test -count=1 ./triage/ >/dev/null) || { log "hack/vuln/triage's own tests fail"; exit 1; }

log "govulncheck $(cd "$ROOT" && "$GO" env GOVERSION) ./... against golang.org/x/vulndb $(sed -n 's/.*golang.org\/x\/vulndb \(v[^ ]*\).*/\1/p' "$MOD_DIR/go.mod" | head -1)"
cd "$ROOT"
GOFLAGS= "$DIR/bin/govulncheck" -db "file://$DIR/db" -format json ./... >"$DIR/scan.json"
"$DIR/bin/triage" -accepted "$MOD_DIR/accepted.txt" <"$DIR/scan.json"
