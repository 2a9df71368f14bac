# PostgreSQL 15 from Debian, for the local stack (compose.yaml here): the same server the tests
# run, in an image made from the Debian 12 base without a registry (deploy/image-test).
ARG BASE_IMAGE=debian:12
FROM ${BASE_IMAGE}
# No cluster from the package (it would sit unused in the image): start-postgres makes its own.
RUN mkdir -p /etc/postgresql-common \
 && echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.conf \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-15 \
 && rm -rf /var/lib/apt/lists/*
COPY start-postgres /usr/local/bin/start-postgres
USER postgres
CMD ["start-postgres"]
