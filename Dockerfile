# Our operator image: the cluster, topic and user operators and the Kafka init program as
# static binaries on an empty base, run as uid 1001. Build it from the workspace root with
#
#   docker build -t localhost/strimzi-rs/operator:0.1.0 .      (or podman / buildah / nerdctl)
#
# then push it where your cluster pulls from and set that name in the install bundle (see
# deploy/README.md). The test environment, which reaches no registry, builds the same image
# from this file: it runs the build stage's script on the machine itself and packs the final
# stage's root and settings (tests/testenv/images/build-images.sh).

ARG RUST_IMAGE=docker.io/library/rust:1.89-bookworm

FROM ${RUST_IMAGE} AS build
WORKDIR /workspace
COPY . .
RUN deploy/docker/build-root.sh /root-fs

FROM scratch
COPY --from=build /root-fs/ /
USER 1001
WORKDIR /opt/strimzi
ENV PATH=/opt/strimzi/bin:/usr/local/bin STRIMZI_HOME=/opt/strimzi
LABEL org.opencontainers.image.title="strimzi-rs operator" \
      org.opencontainers.image.description="Kafka operators for Kubernetes, compatible with Strimzi 1.2: cluster, topic and user operators and the Kafka init program" \
      org.opencontainers.image.licenses="Apache-2.0"
CMD ["/opt/strimzi/bin/cluster_operator_run.sh"]
