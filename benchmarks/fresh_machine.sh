#!/usr/bin/env bash
# Time the README's two commands on a fresh machine: a clean container from the project's own base
# image (docker/make-base.sh: Debian 12 minbase) with a fresh clone of this repository's HEAD copied
# in. Prints how long `make up` takes until the server answers /health, and how long `make test` takes.
#
# Usage (root, a running Docker engine): benchmarks/fresh_machine.sh
#   ENVHUB_SWE_LANGUAGES=python,go   passed through (a light install)
#   TEST_TIMEOUT_S=1800              stop `make test` after this long (0: no limit)
#   TEST_UNTIL=<epoch seconds>       ... or at this time (whichever is set; for a measurement with a deadline)
#
# The container is root with SYS_ADMIN, no seccomp/AppArmor profile and unmasked /proc paths (a
# machine where we are root: bubblewrap needs user namespaces and a fresh /proc; --privileged is
# refused where the engine itself runs with fewer capabilities), on the host network (apt and PyPI;
# the server listens on a free port). Three more things make it behave as a machine of its own:
# - its PID 1 reaps orphans (--init), as a machine's init does: under `sleep infinity` every
#   orphaned sandbox process stays a zombie, counted against its sandbox uid's RLIMIT_NPROC, until
#   later sandboxes on that uid cannot fork (run 2026-12-01: 308 zombies, 14+ failed tests);
# - SYS_PTRACE, which root has on a machine (reading a sandbox's /proc/PID/ns/pid needs it);
# - the host's sandbox-uid claims (/run/lock/envhub-uids): the container shares the host's kernel
#   and so its uids. Without the shared claims an envhub server on the host takes the container's
#   sandboxes for orphans of a dead server and kills them, and both count one uid's processes
#   against the same RLIMIT_NPROC.
# Where the network re-signs TLS, the host's CA bundle is lent to pip only (PIP_CERT); the machine's
# own ca-certificates are what `make up` installs. Before the timed part the "machine" gets what
# cloning and typing `make` presuppose: git and make (timed apart as "preparation").
set -euo pipefail
cd "$(dirname "$0")/.."
DOCKER=${DOCKER:-/usr/bin/docker}
IMAGE=envhub-base:bookworm
NAME=envhub-fresh-$$
OUT=$(mktemp -d /var/tmp/envhub-fresh.XXXXXX)
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
T=$SECONDS
docker/make-base.sh "$IMAGE"
echo "base image: $((SECONDS - T)) s"

git clone -q . "$OUT/envhub"  # committed files only, as a fresh clone has
trap '"$DOCKER" rm -f "$NAME" >/dev/null 2>&1 || true' EXIT
mkdir -p /run/lock/envhub-uids
"$DOCKER" run -d --init --name "$NAME" --network host --cap-add SYS_ADMIN --cap-add SYS_PTRACE --security-opt seccomp=unconfined \
  -v /run/lock/envhub-uids:/run/lock/envhub-uids \
  --security-opt apparmor=unconfined --security-opt systempaths=unconfined \
  -v /etc/ssl/certs/ca-certificates.crt:/etc/envhub-host-ca.crt:ro "$IMAGE" sleep infinity >/dev/null
"$DOCKER" cp "$OUT/envhub" "$NAME:/root/envhub"
in_box() { "$DOCKER" exec -e DEBIAN_FRONTEND=noninteractive -e PIP_CERT=/etc/envhub-host-ca.crt \
             -e ENVHUB_PORT="$PORT" -e COLUMNS=160 ${ENVHUB_SWE_LANGUAGES:+-e ENVHUB_SWE_LANGUAGES="$ENVHUB_SWE_LANGUAGES"} \
             -w /root/envhub "$NAME" "$@"; }

T=$SECONDS
in_box bash -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends git make >/dev/null'
echo "preparation (apt-get update, git, make): $((SECONDS - T)) s"

T=$SECONDS
in_box bash -c 'make up > /root/make-up.log 2>&1' &
UP=$!
until curl -fsS "http://127.0.0.1:$PORT/health" >/dev/null 2>&1; do
  if ! kill -0 "$UP" 2>/dev/null; then
    "$DOCKER" exec "$NAME" tail -50 /root/make-up.log; echo "make up exited before serving"; exit 1
  fi
  sleep 2
done
UP_S=$((SECONDS - T))
"$DOCKER" cp "$NAME:/root/make-up.log" "$OUT/make-up.log"
echo "make up until it serves: $UP_S s (log: $OUT/make-up.log)"
grep -E "set-up done|installed [0-9]+ packages|to install:" "$OUT/make-up.log" || true
curl -fsS "http://127.0.0.1:$PORT/ready" | python3 -c 'import json, sys; r = json.load(sys.stdin); print("ready:", r["families"], "unavailable:", r["unavailable"] or "none")'
in_box bash -c 'pkill -INT -f "envhub serve" || true'
wait "$UP" || true

T=$SECONDS
limit=${TEST_TIMEOUT_S:-0}
if [ -n "${TEST_UNTIL:-}" ]; then
  limit=$((TEST_UNTIL - $(date +%s)))
  if [ "$limit" -lt 60 ]; then echo "make test: not run (no time left before TEST_UNTIL)"; exit 0; fi
fi
rc=0
in_box bash -c "timeout $([ "$limit" = 0 ] && echo infinity || echo "${limit}s") make test > /root/make-test.log 2>&1" || rc=$?
TEST_S=$((SECONDS - T))
"$DOCKER" cp "$NAME:/root/make-test.log" "$OUT/make-test.log"
echo "make test: $TEST_S s, exit $rc$([ "$rc" = 124 ] && echo " (stopped at TEST_TIMEOUT_S)") (log: $OUT/make-test.log)"
grep -E "^(FAILED|ERROR)|[0-9]+ (passed|failed)" "$OUT/make-test.log" | tail -15 || true
