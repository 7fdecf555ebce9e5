#!/bin/sh
# A pool replica's entry point: the one thing it does as root is make bubblewrap possible, then it
# runs the server as `envhub` with no capabilities and no way to regain any.
#
# bubblewrap mounts a fresh /proc for each sandbox's pid namespace. The kernel refuses that while
# the container's own /proc has paths masked by Docker (bind mounts over /proc/kcore, /proc/sys, …),
# so those masks are lifted here; compose grants CAP_SYS_ADMIN for this and nothing else needs it.
# Without the capability (a plain `docker run`) the unmounts fail and the server still starts; its
# sandboxes will then report bubblewrap's error.
set -eu
if [ "$(id -u)" = 0 ]; then
  grep ' /proc/' /proc/mounts | cut -d' ' -f2 | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
  export HOME=/home/envhub USER=envhub
  exec setpriv --reuid envhub --regid envhub --init-groups --inh-caps=-all --bounding-set=-all --no-new-privs "$@"
fi
exec "$@"
