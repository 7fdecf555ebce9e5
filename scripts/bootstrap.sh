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

# The SWE factory takes non-Python/JS packages from Debian's source packages (`apt-get source`),
# which needs a deb-src entry; the image ships only `Types: deb`. Mirror the deb.debian.org/debian
# stanza (URIs, Suites, Components, Signed-By) as deb-src, once.
add_deb_src() {
  local src=/etc/apt/sources.list.d/debian.sources out=/etc/apt/sources.list.d/envhub-src.sources
  if grep -rqsE '^[[:space:]]*(Types:.*deb-src|deb-src[[:space:]])' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    return 0
  fi
  if [ "$(id -u)" != 0 ]; then
    echo "no deb-src entry and not root: the Debian sources fetch will fail until one is added" >&2; return 0
  fi
  [ -f "$src" ] || { echo "no $src: add a deb-src entry for deb.debian.org/debian by hand" >&2; return 1; }
  # The stanza (blank-line separated) whose URIs is exactly deb.debian.org/debian, Types swapped.
  awk -v RS= -v ORS='\n\n' '/URIs:[[:space:]]*https?:\/\/deb\.debian\.org\/debian[[:space:]]*(\n|$)/ {
        n = split($0, lines, "\n"); s = ""
        for (i = 1; i <= n; i++) {
          if (lines[i] ~ /^#/) continue
          if (lines[i] ~ /^Types:/) lines[i] = "Types: deb-src"
          s = s lines[i] "\n"
        }
        printf "%s", s; exit }' "$src" > "$out.tmp"
  if ! grep -q '^Types: deb-src' "$out.tmp"; then
    rm -f "$out.tmp"; echo "no deb.debian.org/debian stanza in $src" >&2; return 1
  fi
  mv "$out.tmp" "$out"
  echo "added deb-src: $out"
  apt-get update -qq
}
add_deb_src

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
  # The SWE factory's pinned package sources (PyPI, npm, Debian), fetched once and checked.
  if [ "$langs" = all ]; then .venv/bin/envhub swe sources fetch
  else .venv/bin/envhub swe sources fetch $(printf -- '--language %s ' ${langs//,/ }); fi
fi
# The task sets' tasks (a generator and a seed range each), written once into the data folder.
.venv/bin/envhub sets --materialize
echo "set-up done in $((SECONDS - started)) s"
