//go:build e2e

// Package images builds the container images the e2e tests' real node runs,
// locally, with go-containerregistry: no Docker daemon, no registry on the
// internet.
//
//   - SparkStandIn: e2e/cmd/sparkstandin, laid out as Spark's image
//     (/opt/entrypoint.sh as ENTRYPOINT, uid 185, /opt/spark/work-dir), for
//     driver and executor pods.
//   - Argoexec: the pinned argoexec binary in the layout of Argo's own
//     argoexec image (/bin/argoexec, ENTRYPOINT ["argoexec"] found on
//     PATH), for Argo's controller config executor.image: the agent pod and
//     the init and wait containers of container steps run it.
//   - BuildRelease: sparkplug's release exactly as `make release` builds it
//     (hack/release.sh), once per repository and version in a test process;
//     PushRelease pushes its OCI image index as the README's
//     `tar -xf ... -C img && crane push img REPO:TAG` does, to the registry
//     StartRegistry serves on 127.0.0.1, from which containerd pulls it.
//
// The first two are image tarballs in the `docker save` format, which
// `ctr images import` reads, named by their Ref; pods name that Ref with
// an IfNotPresent (or Never) pull policy.
package images
