# The office family's server image: the hub image plus headless LibreOffice and its Python bridge
# (environments/office/lo.py drives a warm soffice through python3-uno).
#   docker build -f docker/office.Dockerfile -t envhub-office .
ARG HUB=envhub-hub:latest
FROM ${HUB}
USER root
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libreoffice-calc-nogui libreoffice-writer-nogui libreoffice-impress-nogui python3-uno fonts-dejavu-core \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
USER envhub
ENV ENVHUB_FAMILIES='["office"]'
