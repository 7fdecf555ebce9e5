#!/usr/bin/env bash
# CI for the containerised form (issue 6), self-contained; ~6-12 min on 2 cores (base image and
# builds dominate; Docker's layer cache makes reruns faster). Phases, each timed:
#   engine    install docker.io, debootstrap, docker-compose from Debian if missing; start dockerd
#   base      debootstrap + docker import → envhub-base:bookworm (the mirror from apt's sources)
#   images    envhub-sandbox, envhub-hub, envhub-postgres, envhub-swe, envhub-office
#   pool      docker-compose up -d: router + echo + 2×terminal + db + postgres + swe + office;
#             wait until every family has a ready replica
#   conform   `envhub conformance` against the single entry point
#   sample    a validation sample through the entry point: oracle → reward 1 and noop → reward 0
#             for fixed terminal tasks and a day-seeded draw of validated tasks from each family
#   backend   `envhub validate` of a terminal sample and `envhub conformance` against a server with
#             ENVHUB_SANDBOX=docker on this host, and the tests/docker suite (faults: killed replica, refusing engine, memory limit)
#   ray       the pool on Ray (docker/ray): a head and two worker containers; conformance and a smoke
#             of each served family through its entry point, then tests/docker/test_ray_pool.py
#             (a worker killed mid-episode, a replica added and drained); torn down after
#   down      tear the pool down
# Exits non-zero when any phase fails. Needs root. Uses the repo's .venv for the envhub CLI.
set -uo pipefail
export COLUMNS="${COLUMNS:-160}"  # readable rich tables in the log
cd "$(dirname "$0")/.."
REPO="$PWD"
DOCKER=/usr/bin/docker
COMPOSE=(docker-compose -f compose.yaml -p envhub-ci)
PORT="${ENVHUB_CI_PORT:-18080}"
URL="http://127.0.0.1:$PORT"
PY="$REPO/.venv/bin/python"
ENVHUB="$REPO/.venv/bin/envhub"
declare -a TIMES=()
FAILED=0
phase() {  # phase NAME COMMAND...
  local name="$1"; shift
  local t0=$SECONDS
  echo "::: $name"
  if "$@"; then TIMES+=("$name $((SECONDS - t0))s ok"); else TIMES+=("$name $((SECONDS - t0))s FAILED"); FAILED=1; fi
}
summary() {
  echo "--- docker CI phase timings ---"
  printf '  %s\n' "${TIMES[@]}"
  echo "  total ${SECONDS}s"
}

engine() {
  local need=()
  [[ -x /usr/bin/docker && -x /usr/sbin/dockerd ]] || need+=(docker.io)
  command -v debootstrap >/dev/null || need+=(debootstrap)
  command -v docker-compose >/dev/null || need+=(docker-compose)
  if ((${#need[@]})); then
    apt-get update -qq && apt-get install -y -qq -o DPkg::Lock::Timeout=900 "${need[@]}" >/dev/null || return 1
  fi
  if ! "$DOCKER" info >/dev/null 2>&1; then
    (nohup /usr/sbin/dockerd >/var/log/envhub-dockerd.log 2>&1 &)
    for _ in $(seq 60); do "$DOCKER" info >/dev/null 2>&1 && break; sleep 1; done
  fi
  "$DOCKER" info >/dev/null 2>&1
}
base() { docker/make-base.sh envhub-base:bookworm; }
images() { ENVHUB_BASE=envhub-base:bookworm docker/build-images.sh; }
wait_ready() {  # until every family's replica is ready behind the router
  for _ in $(seq 120); do
    if curl -fsS "$URL/router/replicas" 2>/dev/null | "$PY" -c "
import json, sys
r = json.load(sys.stdin)
fams = {f for x in r if x['ready'] for f in x['families']}
sys.exit(0 if {'echo', 'terminal', 'db', 'swe', 'office'} <= fams and sum(x['ready'] for x in r) >= 6 else 1)" 2>/dev/null; then
      return 0
    fi
    sleep 2
  done
  "${COMPOSE[@]}" ps; "${COMPOSE[@]}" logs --tail 30; return 1
}
pool() { ENVHUB_PORT="$PORT" "${COMPOSE[@]}" up -d --no-build && wait_ready; }
conform() { "$ENVHUB" conformance "$URL"; }
sample() {  # oracle → 1 and noop → 0 through the entry point: fixed tasks, then a day-seeded draw per family
  "$ENVHUB" smoke terminal/count-error-lines terminal/make-build --url "$URL" \
    && "$ENVHUB" smoke --per-family 1 --seed "$(date +%j)" --url "$URL"
}
backend() {
  local data=/var/lib/envhub-ci-docker rc=0
  mkdir -p "$data" && chmod 755 "$data"
  "$PY" -c "from envhub.verify import runtime; from pathlib import Path; runtime.install(Path('$data'))" || return 1
  ENVHUB_DATA_DIR="$data" ENVHUB_SANDBOX=docker ENVHUB_DOCKER_IMAGE=envhub-sandbox:latest \
    "$ENVHUB" validate terminal/count-error-lines terminal/fix-permissions --runs 1 --no-write || rc=1
  # The conformance suite against a server whose sessions and verifiers are Docker containers.
  local port=$((PORT + 1)) pid
  ENVHUB_DATA_DIR="$data" ENVHUB_SANDBOX=docker ENVHUB_DOCKER_IMAGE=envhub-sandbox:latest ENVHUB_PORT="$port" \
    ENVHUB_FAMILIES=echo,terminal ENVHUB_STORE_ENABLED=false "$ENVHUB" serve >/tmp/envhub-ci-docker-serve.log 2>&1 &
  pid=$!
  for _ in $(seq 60); do curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break; sleep 1; done
  "$ENVHUB" conformance "http://127.0.0.1:$port" || { rc=1; tail -20 /tmp/envhub-ci-docker-serve.log; }
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  ENVHUB_TEST_DOCKER_URL="$URL" ENVHUB_TEST_COMPOSE_PROJECT=envhub-ci \
    "$PY" -m pytest -q -m docker tests/docker || rc=1
  return $rc
}
down() { "${COMPOSE[@]}" down -v --remove-orphans >/dev/null 2>&1; }
ray_pool() {
  local rc=0 rport=$((PORT + 2)) rurl
  local ray_compose=(docker-compose -f docker/ray/compose.yaml -p envhub-ci-ray)
  rurl="http://127.0.0.1:$rport"
  docker/ray/build.sh || return 1
  ENVHUB_RAY_PORT="$rport" ENVHUB_RAY_ENVS="--env echo --env terminal --env db" "${ray_compose[@]}" up -d || return 1
  for _ in $(seq 150); do  # every family live (slow nodes: Ray's agents take a while on 2 cores)
    curl -fsS "$rurl/ray/replicas" 2>/dev/null | "$PY" -c "
import json, sys
sys.exit(0 if len({r['family'] for r in json.load(sys.stdin) if r['state'] == 'live'}) == 3 else 1)" 2>/dev/null && break
    sleep 2
  done
  "$ENVHUB" conformance "$rurl" || rc=1
  for fam in echo terminal db; do
    "$ENVHUB" smoke --env "$fam" --per-family 1 --seed "$(date +%j)" --url "$rurl" || rc=1
  done
  ENVHUB_TEST_RAY_URL="$rurl" ENVHUB_TEST_RAY_PROJECT=envhub-ci-ray "$PY" -m pytest -q tests/docker/test_ray_pool.py || rc=1
  ((rc == 0)) || "${ray_compose[@]}" logs --tail 40 head
  "${ray_compose[@]}" down -v --remove-orphans >/dev/null 2>&1
  return $rc
}

phase engine engine || { summary; exit 1; }
phase base base
phase images images
if ((FAILED == 0)); then
  phase pool pool
  if ((FAILED == 0)); then phase conform conform; phase sample sample; fi
  phase backend backend
fi
phase down down
((FAILED == 0)) && phase ray ray_pool
summary
exit $FAILED
