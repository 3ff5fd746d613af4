# syntax=docker/dockerfile:1
# sparkplug's image, for those with Docker (or BuildKit):
#
#   docker build --build-arg VERSION=v0.1.0 -t ghcr.io/sparkplug-io/sparkplug:v0.1.0 .
#
# `make image` builds the same image without a Docker daemon (hack/image):
# one layer with the static binary at /sparkplug, no shell, no /etc/passwd,
# run as 8737:8737. hack/image's tests check that this file and that program
# agree on the user, entrypoint, command, working dir and labels
# (the source and the licence).

# The builder runs on the build machine and cross-compiles (no emulation).
FROM --platform=$BUILDPLATFORM golang:1.27.3 AS build
ARG TARGETOS=linux
ARG TARGETARCH=amd64
ARG VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -buildvcs=false -ldflags "-s -w -X main.version=${VERSION}" \
    -o /out/sparkplug ./cmd/sparkplug

FROM scratch
ARG VERSION=dev
LABEL org.opencontainers.image.source="https://github.com/sparkplug-io/sparkplug" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.title="sparkplug" \
      org.opencontainers.image.description="Argo Workflows executor plugin that runs Apache Spark applications" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build --chown=0:0 --chmod=0755 /out/sparkplug /sparkplug
# Numeric: there is no /etc/passwd. 8737 is the uid Argo's agent writes the
# plugin token as (plugin.yaml explains); the group keeps it out of root's.
USER 8737:8737
WORKDIR /
ENTRYPOINT ["/sparkplug"]
CMD ["serve"]
