#!/bin/sh
# A Ray node's entry point. Like docker/replica-entrypoint.sh it lifts Docker's /proc masks so that
# bubblewrap can mount a fresh /proc, but it stays root: on a Ray node the replica runs inside Ray's
# worker processes, and as a non-root server its sandboxes would share one uid with Ray's many
# threads, so each sandbox's RLIMIT_NPROC (counted per uid) would be spent before it starts. As root
# the local backend gives every sandbox its own uid, as on a host (it needs Docker's default
# capabilities for that: CHOWN, DAC_OVERRIDE, SETUID, KILL…; compose adds SYS_ADMIN for the unmounting).
set -eu
# Sandbox uids are the kernel's: claimed in a folder of the node's own, they look orphaned to every
# other root server on the host, whose start-up sweep kills them (compose binds the host's folder).
if ! mountpoint -q /run/lock/envhub-uids; then
  echo "bind the host's /run/lock/envhub-uids at /run/lock/envhub-uids (docker/ray/compose.yaml does)" >&2
  exit 1
fi
grep ' /proc/' /proc/mounts | cut -d' ' -f2 | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
exec "$@"
