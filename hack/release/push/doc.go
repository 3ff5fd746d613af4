// Command push puts a release that `make release` built into an OCI
// registry: the two image indexes, sparkplug's and the acknowledger's,
// from their OCI layout archives, each to the repository and tag the
// release's manifests name (it refuses any other: they pull by that name
// and the index's digest), and the Helm chart as Helm's OCI artifact
// (`helm push`'s media types), where `helm install oci://...` finds it:
//
//	go run ./hack/release/push -dir bin/release/vX.Y.Z -version vX.Y.Z \
//	  -image HOST/PATH/sparkplug -ack-image HOST/PATH/sparkplug-ack -charts HOST/PATH/charts
//
// `make push REGISTRY=HOST/PATH VERSION=vX.Y.Z` runs it. Credentials are
// go-containerregistry's default keychain: the Docker config
// (`docker login`, $DOCKER_CONFIG) and its credential helpers; a registry
// on localhost or 127.0.0.1 is spoken to over plain HTTP. Pushing is by
// content: the same release pushes the same digests, again and again.
package main
