#!/usr/bin/env bash
# Build every image the pool needs, offline-capable.
#   ENVHUB_BASE    base image (default: envhub-base:bookworm, made here by docker/make-base.sh when
#                  missing; set python:3.11-slim to use the official image where a registry is reachable)
#   ENVHUB_IMAGES  extra family images to build: "swe office" (heavy; default none)
#   SWE_LANGUAGES  toolchains for the swe image (default "all")
# Images: envhub-sandbox (Docker backend's session/verifier image), envhub-hub, envhub-postgres,
# and envhub-<family> for each extra family. Uses Debian's client /usr/bin/docker (BuildKit).
set -euo pipefail
cd "$(dirname "$0")/.."
DOCKER="${DOCKER:-/usr/bin/docker}"
BASE="${ENVHUB_BASE:-envhub-base:bookworm}"
if [[ "$BASE" == envhub-base:* ]]; then docker/make-base.sh "$BASE"; fi
CA=()
if [[ -f /etc/ssl/certs/ca-certificates.crt ]]; then CA=(--secret id=ca,src=/etc/ssl/certs/ca-certificates.crt); fi
build() {  # build TAG [docker build args...]
  local tag="$1"; shift
  local t0=$SECONDS
  DOCKER_BUILDKIT=1 "$DOCKER" build -q --network host "${CA[@]}" --build-arg BASE="$BASE" -t "$tag" "$@" . >/dev/null
  echo "built $tag in $((SECONDS - t0))s"
}
build envhub-sandbox:latest --target sandbox
build envhub-hub:latest
build envhub-postgres:latest -f docker/postgres.Dockerfile
for fam in ${ENVHUB_IMAGES:-}; do
  build "envhub-$fam:latest" -f "docker/$fam.Dockerfile" --build-arg HUB=envhub-hub:latest \
    ${SWE_LANGUAGES:+--build-arg SWE_LANGUAGES="$SWE_LANGUAGES"}
done
