#!/usr/bin/env bash
# Build every image the pool needs, offline-capable.
#   ENVHUB_BASE    base image (default: envhub-base:bookworm, made here by docker/make-base.sh when
#                  missing; set python:3.11-slim to use the official image where a registry is reachable)
#   ENVHUB_IMAGES  family images beside the hub: default "swe office" (the pool serves every family);
#                  "" builds only what the light families (echo, terminal, db) need
#   SWE_LANGUAGES  toolchains in the swe image (default: all 18; e.g. "python go rust")
# Images: envhub-sandbox (the Docker backend's session/verifier image), envhub-hub, envhub-postgres,
# and envhub-<family>: the same Dockerfile with the family's system packages (EXTRA_PACKAGES) in
# the sandbox stage, below the code. Uses Debian's client /usr/bin/docker (BuildKit).
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
  echo "built $tag in $((SECONDS - t0))s ($("$DOCKER" image inspect -f '{{.Size}}' "$tag" | awk '{printf "%.0f MB", $1 / 1e6}'))"
}
family_packages() {  # the Debian packages a family image adds
  case "$1" in
    # environments/swe/toolchains.py is the one list of toolchain packages; read it as a plain file
    # (importing the package would need the project's dependencies).
    swe) python3 - "${SWE_LANGUAGES:-}" <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("toolchains", "environments/swe/toolchains.py")
mod = importlib.util.module_from_spec(spec)
sys.modules["toolchains"] = mod
spec.loader.exec_module(mod)
print(" ".join(mod.packages_for(sys.argv[1].split() or None)))
PY
    ;;
    # What environments/office/lo.py drives, and the fonts tasks' documents use (as scripts/bootstrap.sh).
    office) echo "libreoffice-calc-nogui libreoffice-writer-nogui libreoffice-impress-nogui python3-uno" \
                 "fonts-dejavu-core fonts-nanum" ;;
    *) echo "unknown family image: $1" >&2; return 1 ;;
  esac
}
family_extras() {  # the project's optional dependency groups a family image adds (pyproject.toml)
  case "$1" in
    office) echo "office" ;;  # the drawn set's generator draws its data from scikit-learn and statsmodels
    *) echo "" ;;
  esac
}
build envhub-sandbox:latest --target sandbox
build envhub-hub:latest
build envhub-postgres:latest -f docker/postgres.Dockerfile
for fam in ${ENVHUB_IMAGES-swe office}; do
  build "envhub-$fam:latest" --build-arg EXTRA_PACKAGES="$(family_packages "$fam")" --build-arg FAMILIES="$fam" \
    --build-arg PIP_EXTRAS="$(family_extras "$fam")"
done
