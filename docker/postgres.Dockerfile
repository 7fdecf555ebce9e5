# PostgreSQL for the db family, from Debian's package (no registry image needed).
# Build: docker build -f docker/postgres.Dockerfile --build-arg BASE=envhub-base:bookworm -t envhub-postgres .
ARG BASE=python:3.11-slim
FROM ${BASE}
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8
RUN apt-get update \
 && apt-get install -y --no-install-recommends postgresql-15 \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \
 && install -d -o postgres -g postgres -m 0700 /var/lib/postgresql/data \
 && install -d -o postgres -g postgres -m 2775 /var/run/postgresql
COPY docker/postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint.sh
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
USER postgres
EXPOSE 5432
HEALTHCHECK --interval=5s --timeout=3s --start-period=20s --retries=5 \
  CMD ["pg_isready", "-h", "127.0.0.1", "-p", "5432"]
CMD ["/usr/local/bin/postgres-entrypoint.sh"]
