# envhub hub image: serves every registered family over HTTP (`envhub serve`).
#
# BASE is any Debian 12 image: the default official slim Python image, or one made offline with
# docker/make-base.sh (`--build-arg BASE=envhub-base:bookworm`). Either way Debian's python3 is
# installed: the verifier runs /usr/bin/python3 and the server's venv is built from it, so both
# bases give the same interpreter (3.11).
#
# Stages:  os       Debian's python3, bubblewrap and the tools every task may use.
#          sandbox  os + EXTRA_PACKAGES: a family's own system packages (the SWE toolchains, LibreOffice;
#                   see docker/build-images.sh). It is also the image the Docker sandbox backend starts
#                   sessions and verifiers in (`--target sandbox -t envhub-sandbox`).
#          build    the venv (project dependencies, then the project) and the verifier runtime; built
#                   from `os`, so every family image shares it.
#          hub      sandbox + the venv + the sources, running as the non-root user `envhub`.
# A family image is this file with EXTRA_PACKAGES set: its packages sit below the code, so a source
# edit rebuilds only the thin top layers, never the toolchains.
#
# pip needs the host's CA bundle in some networks; pass it as a BuildKit secret, never baked in:
#   docker build --network host --secret id=ca,src=/etc/ssl/certs/ca-certificates.crt -t envhub-hub .
ARG BASE=python:3.11-slim

FROM ${BASE} AS os
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 LC_ALL=C.UTF-8
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      python3 python3-venv bubblewrap bash ca-certificates util-linux procps \
      coreutils findutils grep sed gawk diffutils patch file tree less \
      tar gzip bzip2 xz-utils zip unzip git jq sqlite3 make gcc libc6-dev curl \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \
 && useradd --uid 1000 --create-home --shell /bin/bash agent

FROM os AS sandbox
ARG EXTRA_PACKAGES=""
RUN if [ -n "${EXTRA_PACKAGES}" ]; then \
      apt-get update \
      && apt-get install -y --no-install-recommends ${EXTRA_PACKAGES} \
      && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb; \
    fi

FROM os AS build
WORKDIR /app
COPY pyproject.toml ./
# Dependencies first (a layer that survives source edits), read from pyproject.toml: the project's,
# and the optional groups a family image names (PIP_EXTRAS, e.g. "office": its generator's data).
ARG PIP_EXTRAS=""
RUN --mount=type=secret,id=ca,target=/etc/ssl/certs/ca-certificates.crt \
    python3 -m venv /opt/envhub \
 && /opt/envhub/bin/python -c "import sys, tomllib; p = tomllib.load(open('pyproject.toml','rb'))['project']; print('\n'.join(p['dependencies'] + [d for e in sys.argv[1:] for d in p['optional-dependencies'][e]]))" ${PIP_EXTRAS} > /tmp/deps.txt \
 && /opt/envhub/bin/pip install --no-cache-dir --disable-pip-version-check -q -r /tmp/deps.txt
COPY envhub ./envhub
COPY environments ./environments
COPY verifiers ./verifiers
COPY harnesses ./harnesses
RUN --mount=type=secret,id=ca,target=/etc/ssl/certs/ca-certificates.crt \
    /opt/envhub/bin/pip install --no-cache-dir --disable-pip-version-check -q --no-deps -e . \
 && find /app -name __pycache__ -prune -exec rm -rf {} +
RUN --mount=type=secret,id=ca,target=/etc/ssl/certs/ca-certificates.crt \
    ENVHUB_DATA_DIR=/var/lib/envhub /opt/envhub/bin/envhub setup >/dev/null

FROM sandbox AS hub
RUN useradd --uid 10001 --system --create-home --shell /usr/sbin/nologin envhub \
 && install -d -o envhub -g envhub -m 0755 /var/lib/envhub
COPY --from=build /opt/envhub /opt/envhub
COPY --from=build --chown=envhub:envhub /var/lib/envhub /var/lib/envhub
COPY --from=build /app /app
COPY tasks /app/tasks
COPY docker/router.py docker/replica-entrypoint.sh /app/docker/
# The families this image serves by default ("" = every registered one); compose sets it per service.
ARG FAMILIES=""
ENV PATH=/opt/envhub/bin:$PATH ENVHUB_FAMILIES=${FAMILIES} \
    ENVHUB_HOST=0.0.0.0 ENVHUB_PORT=8000 \
    ENVHUB_DATA_DIR=/var/lib/envhub ENVHUB_TASKS_DIR=/app/tasks \
    PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
USER envhub
WORKDIR /app
# The served families' task sets, materialised now so a replica starts serving at once (the hub
# image serves echo, terminal and db; a family image its family).
RUN envhub sets --materialize --env "${FAMILIES:-echo,terminal,db}" >/dev/null
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["/opt/envhub/bin/python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health', timeout=2)"]
CMD ["envhub", "serve"]
