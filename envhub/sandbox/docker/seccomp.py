"""The seccomp profile of the Docker backend's verifier containers (`DockerBackend.run_once`).

Docker's default profile forbids the namespaces the SWE harness builds its jail from
(`verifiers.swe.jail_argv`: bubblewrap, unprivileged, in user/pid/net namespaces), so under it the
code under test would run as the harness's peer. This profile allows those and keeps refusing what
no test run needs and what widens the kernel's reach: modules, kexec, reboot, clocks, swap, keys,
BPF, perf, io_uring, userfaultfd, handle-based opens, the new mount API and joining other
namespaces (`setns`). Session containers keep Docker's default profile; no container gets
CAP_SYS_ADMIN.
"""

from __future__ import annotations

import json

DENIED = (
    "acct", "add_key", "bpf", "clock_adjtime", "clock_settime", "create_module", "delete_module", "finit_module",
    "fsconfig", "fsmount", "fsopen", "fspick", "get_kernel_syms", "init_module", "io_uring_enter",
    "io_uring_register", "io_uring_setup", "ioperm", "iopl", "kexec_file_load", "kexec_load", "keyctl",
    "lookup_dcookie", "mount_setattr", "move_mount", "name_to_handle_at", "nfsservctl", "open_by_handle_at",
    "open_tree", "perf_event_open", "query_module", "quotactl", "quotactl_fd", "reboot", "request_key", "setns",
    "settimeofday", "stime", "swapoff", "swapon", "_sysctl", "syslog", "sysfs", "umount", "uselib", "userfaultfd",
    "ustat", "vhangup", "vm86", "vm86old",
)

#: What a verifier container's `HostConfig` adds: this profile, and /proc without Docker's masked
#: and read-only paths (the CLI's `systempaths=unconfined`): a fresh proc cannot be mounted for the
#: jail's pid namespace over a masked one. The harness runs as an unprivileged uid without
#: capabilities, which cannot use what they hid.
VERIFIER_HOST_CONFIG = {
    "SecurityOpt": ["seccomp=" + json.dumps({"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
        {"names": list(DENIED), "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]})],
    "MaskedPaths": [],
    "ReadonlyPaths": [],
}
