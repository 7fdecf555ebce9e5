# The swe family's server image: the hub image plus the language toolchains from Debian, as listed
# by environments/swe/toolchains.py (one source of truth). SWE_LANGUAGES picks a subset
# ("python go rust"); the default "all" is every language (several GB).
#   docker build -f docker/swe.Dockerfile --build-arg SWE_LANGUAGES="python go" -t envhub-swe .
ARG HUB=envhub-hub:latest
FROM ${HUB}
ARG SWE_LANGUAGES=all
USER root
RUN pkgs="$(/opt/envhub/bin/python -c "import sys; from environments.swe.toolchains import TOOLCHAINS as T; \
want = sys.argv[1].split(); print(' '.join(sorted({p for l, t in T.items() if want == ['all'] or l in want for p in t.apt})))" "$SWE_LANGUAGES")" \
 && echo "installing: $pkgs" \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $pkgs \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
USER envhub
ENV ENVHUB_FAMILIES='["swe"]'
