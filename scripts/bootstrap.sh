#!/usr/bin/env bash
# Install what envhub needs on Debian 12 (idempotent): system packages, the virtualenv, the
# verifier runtime and the SWE family's language toolchains. Run as root (apt); everything else
# lives in .venv and /var/lib/envhub.
#
# ENVHUB_SWE_LANGUAGES keeps the toolchain install light: "python,go" installs only those (the
# other languages' tasks then show as unavailable, with the command that adds them), "none" skips
# it; unset or "all" installs all 18 (~2 GB on disk).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS

APT_PACKAGES=(bubblewrap python3 python3-venv git ca-certificates curl make gcc libc6-dev patch diffutils findutils util-linux
              tar gzip bzip2 xz-utils zip unzip jq
              sqlite3 procps file bc
              postgresql libreoffice-calc-nogui libreoffice-writer-nogui libreoffice-impress-nogui python3-uno
              fonts-nanum chromium)
missing=()
for p in "${APT_PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
  echo "installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq -o DPkg::Lock::Timeout=900 "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then "$PY" -m venv .venv; fi
.venv/bin/pip install -q --disable-pip-version-check --upgrade pip
.venv/bin/pip install -q --disable-pip-version-check -e '.[test]'
.venv/bin/envhub setup

langs=${ENVHUB_SWE_LANGUAGES:-all}
if [ "$langs" != none ]; then
  echo "SWE toolchains: ${langs} (ENVHUB_SWE_LANGUAGES)"
  if [ "$langs" = all ]; then .venv/bin/envhub toolchains install
  else .venv/bin/envhub toolchains install ${langs//,/ }; fi
fi
echo "set-up done in $((SECONDS - started)) s"
