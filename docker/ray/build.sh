#!/usr/bin/env bash
# envhub-ray: the hub image + Ray (docker/ray/Dockerfile). Needs envhub-hub:latest (docker/build-images.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
CA=()
if [[ -f /etc/ssl/certs/ca-certificates.crt ]]; then CA=(--secret id=ca,src=/etc/ssl/certs/ca-certificates.crt); fi
DOCKER_BUILDKIT=1 /usr/bin/docker build -q --network host "${CA[@]}" -f docker/ray/Dockerfile -t envhub-ray:latest . >/dev/null
