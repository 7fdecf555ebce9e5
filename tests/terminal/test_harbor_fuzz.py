"""Fuzzing the Harbor importer's untrusted inputs (issue 40): task.toml values, Dockerfiles and
tarballs. For any input the importer either imports the task or refuses it with a TaskFormatError
(one line); it never raises anything else, never writes outside the output folder and never copies
a file from outside the task folder into it."""

from __future__ import annotations

import io
import math
import os
import shutil
import tarfile
import uuid
from pathlib import Path

import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envhub.errors import TaskFormatError
from environments.terminal.harbor import import_harbor
from tests.terminal.test_harbor_security import SECRET, assert_no_leak, make_task, snapshot

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                       HealthCheck.too_slow])
MARK = "pwn40"  # every name an attack could create outside carries it

scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=40),
                    st.sampled_from(["2G", "512M", "0", "-1G", "1e9T", "inf", "/app", "a" * 3000]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                      max_leaves=6)
KEYS = {"task": ["name", "description", "version", "keywords", "authors"],
        "metadata": ["difficulty", "tags", "category"],
        "agent": ["timeout_sec", "user", "network_mode", "allowed_hosts"],
        "verifier": ["timeout_sec", "env", "user", "network_mode", "allowed_hosts", "environment_mode", "collect",
                     "environment"],
        "solution": ["env"],
        "environment": ["memory", "memory_mb", "cpus", "build_timeout_sec", "allow_internet", "storage_mb", "gpus",
                        "mcp_servers", "docker_image", "os", "workdir", "env", "network_mode", "allowed_hosts",
                        "gpu_types", "tpu", "healthcheck", "skills_dir"]}
#: Harbor's top-level fields that are not tables (a `[[steps]]` entry is a table of its own).
TOP = ["schema_version", "source", "artifacts", "multi_step_reward_strategy", "steps"]
modes = st.sampled_from(["public", "no-network", "allowlist", "PUBLIC", "none"])
tables = st.fixed_dictionaries({}, optional={
    **{t: st.one_of(st.fixed_dictionaries({}, optional={k: st.one_of(values, modes) for k in keys}), values)
       for t, keys in KEYS.items()},
    **{k: st.one_of(values, st.lists(st.fixed_dictionaries({"name": st.text(max_size=12)}, optional={
        "agent": st.fixed_dictionaries({}, optional={"timeout_sec": values, "network_mode": modes}),
        "verifier": st.fixed_dictionaries({}, optional={"timeout_sec": values, "env": values}),
        "min_reward": values}), max_size=3)) for k in TOP}})


def _toml(data: dict) -> str:
    def clean(v):  # TOML has no null
        if isinstance(v, dict):
            return {str(k): clean(x) for k, x in v.items() if x is not None}
        if isinstance(v, list):
            return [clean(x) for x in v if x is not None]
        return v
    try:
        return tomli_w.dumps(clean(data))
    except (TypeError, ValueError):
        return "[agent]\ntimeout_sec = nan\n"


def _outside_state(tmp: Path) -> dict:
    return snapshot(tmp, skip=tmp / "tasks")


def _nothing_escaped(tmp: Path, before: dict) -> None:
    assert _outside_state(tmp) == before
    for folder in ("/", "/tmp", "/var/tmp", "/etc", str(tmp.parent)):
        assert not [n for n in os.listdir(folder) if MARK in n], folder


def _import(src: Path, dest: Path) -> None:
    try:
        out = import_harbor(src, dest, replay_steps=False, overwrite=True)
    except TaskFormatError as e:
        assert "\n" not in e.detail.strip(), e.detail
        return
    assert_no_leak(out)


def _fresh(tmp_path: Path) -> Path:
    tmp = tmp_path / uuid.uuid4().hex[:8]
    (tmp / "outside").mkdir(parents=True)
    (tmp / "outside" / "secret.txt").write_text(SECRET + "\n")
    (tmp / "host").mkdir()
    return tmp


@FUZZ
@given(data=tables)
def test_fuzz_task_toml(tmp_path: Path, data: dict) -> None:
    tmp = _fresh(tmp_path)
    src = make_task(tmp / "src", toml=_toml(data))
    before = _outside_state(tmp)
    _import(src, tmp / "tasks")
    _nothing_escaped(tmp, before)
    shutil.rmtree(tmp)


paths = st.sampled_from(["a.txt", ".", "./", "..", "../..", "/app", "/app/", "/app/x", f"../../../../{MARK}",
                         f"/app/../../../../../{MARK}", f"/{MARK}/x", "d", "d/", "d/lnk/", "d/lnk/y", "d/up/z",
                         "*", "*.txt", "[a]", "", "$HOME", "${APP:-/app}/v", "bundle.tar.gz", "../outside/secret.txt",
                         "/etc/passwd", "lnk", "~", "-", "a b"])
lines = st.one_of(
    st.builds(lambda op, a, b: f"{op} {a} {b}", st.sampled_from(["COPY", "ADD", "COPY --chown=1:1"]), paths, paths),
    st.builds(lambda a, b: f'COPY ["{a}", "{b}"]', paths, paths),
    st.builds(lambda a: f"WORKDIR {a}", paths),
    st.builds(lambda k, v: f"ENV {k}={v}", st.sampled_from(["PATH", "APP", "A"]), paths),
    st.builds(lambda k, v: f"ARG {k}={v}", st.sampled_from(["APP", "B"]), paths),
    st.sampled_from(["RUN true", "USER nobody", "SHELL [\"/bin/bash\", \"-c\"]", "CMD x", "FROM debian AS b",
                     "COPY --from=b /x /app", "ADD http://x/y /app", "RUN <<EOF\nx\nEOF", "COPY \"a", "ENV",
                     "COPY", "WORKDIR", "EXPOSE 80", "ONBUILD RUN x", "HEALTHCHECK NONE", "# c", "\\", "COPY {}",
                     "COPY [1]", "ENV A=\"unclosed", "RUN echo \\\n  x"]),
    st.text(max_size=30))


@FUZZ
@given(steps=st.lists(lines, max_size=8))
def test_fuzz_dockerfile(tmp_path: Path, steps: list[str]) -> None:
    tmp = _fresh(tmp_path)
    src = make_task(tmp / "src", "FROM debian\nWORKDIR /app\n" + "\n".join(steps) + "\n")
    ctx = src / "environment"
    (ctx / "d").mkdir()
    os.symlink(tmp / "host", ctx / "d" / "lnk")
    os.symlink("../" * 12 + str(tmp / "host").lstrip("/"), ctx / "d" / "up")
    os.symlink(tmp / "outside" / "secret.txt", ctx / "lnk")
    with tarfile.open(ctx / "bundle.tar.gz", "w:gz") as tar:
        info = tarfile.TarInfo("t.txt")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"t\n"))
    before = _outside_state(tmp)
    _import(src, tmp / "tasks")
    _nothing_escaped(tmp, before)
    shutil.rmtree(tmp)


member_names = st.sampled_from(["a", "a/b", "d", "d/x", "../x", f"../../../../../../{MARK}", f"/{MARK}",
                                "/abs/y", "./c", "l", "l/z", "h", ".", "", "a/../../q", "//d2/e"])
link_targets = st.sampled_from(["a", "/etc", "/etc/passwd", "..", "../..", "../" * 9, "d", "d/x", "l",
                                "../outside/secret.txt", "/", "", "."])
members = st.tuples(st.sampled_from(["file", "dir", "sym", "hard", "fifo", "chr"]), member_names, link_targets,
                    st.integers(min_value=0, max_value=0o7777))


def _tarball(spec: list[tuple], fmt: str, tmp: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.GNU_FORMAT if fmt == "gnu" else tarfile.PAX_FORMAT) \
            as tar:
        for kind, name, target, mode in spec:
            info = tarfile.TarInfo(name)
            info.mode = mode
            target = target.replace("../outside", str(tmp / "outside"))
            if kind == "file":
                info.size = 3
                tar.addfile(info, io.BytesIO(b"xyz"))
                continue
            info.type = {"dir": tarfile.DIRTYPE, "sym": tarfile.SYMTYPE, "hard": tarfile.LNKTYPE,
                         "fifo": tarfile.FIFOTYPE, "chr": tarfile.CHRTYPE}[kind]
            info.linkname = target if kind in ("sym", "hard") else ""
            tar.addfile(info)
    return buf.getvalue()


@FUZZ
@given(spec=st.lists(members, max_size=8), fmt=st.sampled_from(["gnu", "pax"]), cut=st.integers(0, 3))
def test_fuzz_tarball(tmp_path: Path, spec: list[tuple], fmt: str, cut: int) -> None:
    tmp = _fresh(tmp_path)
    src = make_task(tmp / "src", "FROM debian\nWORKDIR /app\nADD bundle.tar.gz /app/v/\nADD bundle.tar.gz /app/\n"
                    "COPY a.txt /app/l/\nCOPY a.txt /app/v/l/\n")
    data = _tarball(spec, fmt, tmp)
    if cut:  # a damaged archive: truncated
        data = data[:max(10, math.floor(len(data) * cut / 4))]
    (src / "environment" / "bundle.tar.gz").write_bytes(data)
    before = _outside_state(tmp)
    _import(src, tmp / "tasks")
    _nothing_escaped(tmp, before)
    shutil.rmtree(tmp)
