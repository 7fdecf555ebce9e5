#!/bin/sh
# A Ray node's entry point. Like docker/replica-entrypoint.sh it lifts Docker's /proc masks so that
# bubblewrap can mount a fresh /proc, but it stays root: on a Ray node the replica runs inside Ray's
# worker processes, and as a non-root server its sandboxes would share one uid with Ray's many
# threads, so each sandbox's RLIMIT_NPROC (counted per uid) would be spent before it starts. As root
# the local backend gives every sandbox its own uid, as on a host (it needs Docker's default
# capabilities for that: CHOWN, DAC_OVERRIDE, SETUID, KILL…; compose adds SYS_ADMIN for the unmounting).
set -eu
grep ' /proc/' /proc/mounts | cut -d' ' -f2 | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
exec "$@"
