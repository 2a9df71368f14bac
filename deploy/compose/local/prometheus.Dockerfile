# Prometheus 2.42 from Debian, for the local stack (compose.yaml here), made from the Debian 12
# base without a registry (deploy/image-test). Its web UI's JavaScript is a recommendation of the
# package and left out: the stack is checked through the HTTP API.
ARG BASE_IMAGE=debian:12
FROM ${BASE_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus \
 && rm -rf /var/lib/apt/lists/*
USER prometheus
CMD ["prometheus", "--help"]
