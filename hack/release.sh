#!/usr/bin/env bash
# hack/release.sh builds a sparkplug release without a Docker daemon:
#
#   hack/release.sh VERSION OUT_DIR
#
# into OUT_DIR:
#   sparkplug-VERSION-image.oci.tar        the image for linux/amd64 and linux/arm64,
#                                          one OCI image index in an OCI layout tar file
#   sparkplug-ack-VERSION-image.oci.tar    the acknowledger's image (cmd/sparkplug-ack, the
#                                          agent pod's part in controller mode), the same way
#   spark-executor-plugin-configmap.yaml   the plugin ConfigMap, its image pinned by digest
#   sparkplug-VERSION-install.yaml         manifests/ rendered by kustomize (hack/release/kustomize,
#                                          kustomize's library, as kubectl kustomize renders it),
#                                          with that ConfigMap
#   sparkplug-VERSION-controller-install.yaml
#                                          controller mode (manifests/modes/controller) rendered by
#                                          kustomize: its plugin ConfigMap runs the acknowledger's
#                                          index, its Deployment the image's, both pinned by digest
#   sparkplug-VERSION-kustomize.tar.gz     manifests/ (kustomization, controller patch) with that
#                                          ConfigMap, to use as a kustomize base, the optional
#                                          monitor/ (its Deployment on the same image) and monitoring/,
#                                          and modes/controller/, pinned as its bundle
#   sparkplug-VERSION.spdx.json            the SBOM: SPDX 2.3 JSON, one package per Go module
#                                          compiled into the binaries above (hack/release/sbom)
#   sparkplug-CHART_VERSION.tgz            the Helm chart (manifests/chart/sparkplug), its
#                                          images pinned by digest, when HELM names a helm binary
#   SHA256SUMS                             the checksums of all of the above
#
# Environment: IMAGE (the repository, default ghcr.io/sparkplug-io/sparkplug),
# ACK_IMAGE (the acknowledger's, default IMAGE-ack),
# HELM (a helm binary, make helm builds one; optional: without it, no chart).
# Nothing else but Go, git, bash, tar, gzip and sha256sum: no cluster, no kubectl.
# `make release VERSION=vX.Y.Z` runs it into bin/release/VERSION.
set -euo pipefail

die() {
	printf 'release: %s\n' "$*" >&2
	exit 2
}

[[ $# -eq 2 ]] || die "usage: hack/release.sh VERSION OUT_DIR"
version=$1
out=$2
image=${IMAGE:-ghcr.io/sparkplug-io/sparkplug}
ack_image=${ACK_IMAGE:-$image-ack}
# The acknowledger's build tags: make release passes the Makefile's
# ACK_TAGS, which says why.
ack_tags=${ACK_TAGS:-nethttpomithttp2}
[[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || die "VERSION $version is not vMAJOR.MINOR.PATCH[-PRERELEASE]"

cd "$(dirname "${BASH_SOURCE[0]}")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -rf "$out"
mkdir -p "$out"

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
for arch in amd64 arm64; do
	for bin in sparkplug sparkplug-ack; do
		tags=
		[[ $bin == sparkplug-ack ]] && tags=$ack_tags
		CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath -tags "$tags" \
			-ldflags "-s -w -X main.version=$version" \
			-o "$work/linux-$arch/$bin" "./cmd/$bin"
	done
done
go run ./hack/image -index \
	-binary "amd64=$work/linux-amd64/sparkplug,arm64=$work/linux-arm64/sparkplug" \
	-ref "$image:$version" -version "$version" \
	-out "$out/sparkplug-$version-image.oci.tar" -digest-file "$work/digest"
digest=$(cat "$work/digest")
go run ./hack/image -index -product sparkplug-ack \
	-binary "amd64=$work/linux-amd64/sparkplug-ack,arm64=$work/linux-arm64/sparkplug-ack" \
	-ref "$ack_image:$version" -version "$version" \
	-out "$out/sparkplug-ack-$version-image.oci.tar" -digest-file "$work/ack-digest"
pinned="$image:$version@$digest"
ack_digest=$(cat "$work/ack-digest")
ack_pinned="$ack_image:$version@$ack_digest"

go run ./hack/genplugin -image "$pinned" -out "$out/spark-executor-plugin-configmap.yaml"

mkdir -p "$work/manifests"
cp -r manifests/kustomization.yaml manifests/rbac.yaml manifests/controller "$work/manifests/"
cp "$out/spark-executor-plugin-configmap.yaml" "$work/manifests/"
go build -o "$work/kustomize" ./hack/release/kustomize
"$work/kustomize" -out "$out/sparkplug-$version-install.yaml" "$work/manifests"
# sparkplug monitor, off unless added (kubectl apply -k manifests/monitor):
# its Deployment runs the same image, pinned.
cp -r manifests/monitor manifests/monitoring "$work/manifests/"
sed -i "s|^\( *image: \).*\$|\1$pinned|" "$work/manifests/monitor/deployment.yaml"
[[ $(grep -cF "image: $pinned" "$work/manifests/monitor/deployment.yaml") == 1 ]] || die "monitor/deployment.yaml: no image to pin"
"$work/kustomize" "$work/manifests/monitor" >/dev/null
# Controller mode: the acknowledger's ConfigMap from plugin-ack.yaml, its
# index pinned, and the controller's Deployment on the image, pinned; the
# bundle is it rendered.
mkdir -p "$work/manifests/modes"
cp -r manifests/modes/controller "$work/manifests/modes/"
go run ./hack/genplugin -in plugin-ack.yaml -image "$ack_pinned" -out "$work/manifests/modes/controller/spark-executor-plugin-configmap.yaml"
sed -i "s|^\( *image: \).*\$|\1$pinned|" "$work/manifests/modes/controller/deployment.yaml"
[[ $(grep -cF "image: $pinned" "$work/manifests/modes/controller/deployment.yaml") == 1 ]] || die "modes/controller/deployment.yaml: no image to pin"
"$work/kustomize" -out "$out/sparkplug-$version-controller-install.yaml" "$work/manifests/modes/controller"
tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 \
	-czf "$out/sparkplug-$version-kustomize.tar.gz" manifests

# The SBOM, from the module graph the binaries record (go version -m); its
# creation time is the commit's (or SOURCE_DATE_EPOCH's), so that the same
# commit writes the same document.
if [[ -n ${SOURCE_DATE_EPOCH:-} ]]; then
	created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
else
	created=$(git log -1 --format=%cI 2>/dev/null || date -u +%Y-%m-%dT%H:%M:%SZ)
fi
revision=$(git rev-parse HEAD 2>/dev/null || true)
go run ./hack/release/sbom -name sparkplug -version "$version" -revision "$revision" -created "$created" \
	-out "$out/sparkplug-$version.spdx.json" "$work"/linux-*/sparkplug "$work"/linux-*/sparkplug-ack

if [[ -n ${HELM:-} && -d manifests/chart/sparkplug ]]; then
	cp -r manifests/chart/sparkplug "$work/chart"
	rm -rf "$work/chart/testdata"
	go run ./hack/release/pinchart -chart "$work/chart" -repository "$image" -tag "$version" -digest "$digest" \
		-ack-repository "$ack_image" -ack-digest "$ack_digest"
	"$HELM" package "$work/chart" --version "${version#v}" --app-version "$version" -d "$out" >/dev/null
fi

(cd "$out" && sha256sum -- * >SHA256SUMS)
printf 'release %s (commit %s) in %s: image %s, acknowledger %s\n' "$version" "$commit" "$out" "$pinned" "$ack_pinned"
