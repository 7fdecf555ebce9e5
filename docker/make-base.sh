#!/usr/bin/env bash
# Build a Debian bookworm base image locally (no registry needed): debootstrap minbase + docker import.
# Usage: docker/make-base.sh [TAG]   (default envhub-base:bookworm). Needs root and debootstrap.
# The mirror comes from ENVHUB_DEBIAN_MIRROR, else the first `URIs:` line of /etc/apt/sources.list.d/*.sources,
# else deb.debian.org. Skips the build when TAG already exists (ENVHUB_REBUILD_BASE=1 forces it).
set -euo pipefail
TAG="${1:-envhub-base:bookworm}"
DOCKER="${DOCKER:-/usr/bin/docker}"
if [[ "${ENVHUB_REBUILD_BASE:-0}" != 1 ]] && "$DOCKER" image inspect "$TAG" >/dev/null 2>&1; then
  echo "base image $TAG exists"; exit 0
fi
MIRROR="${ENVHUB_DEBIAN_MIRROR:-}"
if [[ -z "$MIRROR" ]]; then
  MIRROR="$(grep -h '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1 | awk '{print $2}' || true)"
fi
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
DIR="$(mktemp -d /var/tmp/envhub-base.XXXXXX)"
trap 'rm -rf "$DIR"' EXIT
debootstrap --variant=minbase bookworm "$DIR" "$MIRROR" >/dev/null
# Security updates and the same mirror inside the image; no caches.
cat > "$DIR/etc/apt/sources.list" <<SRC
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
SRC
rm -rf "$DIR"/var/cache/apt/archives/*.deb "$DIR"/var/lib/apt/lists/*
tar -C "$DIR" -c . | "$DOCKER" import -c 'ENV LANG=C.UTF-8' -c 'CMD ["/bin/bash"]' - "$TAG" >/dev/null
echo "built $TAG from $MIRROR"
