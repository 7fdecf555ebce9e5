"""The Harbor importer reads untrusted task folders (issue 40): nothing it writes or reads leaves the
task's folder or the output folder, hidden parts never reach the agent's workspace, every malformed
input is one clear line naming the field, and a batch goes on past a bad folder.

Every test uses real files, real links and real tarballs under `tmp_path`; the "host" is a folder
beside the task (`host/`, `outside/secret.txt`) that the attacks aim at.
"""

from __future__ import annotations

import base64
import gzip
import io
import json
import os
import tarfile
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from envhub.errors import TaskFormatError
from environments.terminal.dockerfile import remap
from environments.terminal.harbor import import_harbor

SECRET = "envhub-secret-7f3a9c-do-not-leak"
TOML = """version = "1.0"
[task]
name = "{name}"
[metadata]
difficulty = "easy"
[verifier]
timeout_sec = 60.0
[agent]
timeout_sec = 300.0
[environment]
memory_mb = 1024
"""


def make_task(root: Path, dockerfile: str | None = "FROM debian\nWORKDIR /app\nCOPY a.txt .\n",
              files: dict[str, str] | None = None, toml: str | None = None, name: str = "t") -> Path:
    """A minimal Harbor task folder: `files` are relative to the task root."""
    root.mkdir(parents=True)
    (root / "instruction.md").write_text("Write /app/out.txt.\n")
    (root / "task.toml").write_text(toml if toml is not None else TOML.format(name=name))
    (root / "environment").mkdir()
    if dockerfile is not None:
        (root / "environment" / "Dockerfile").write_text(dockerfile)
    (root / "environment" / "a.txt").write_text("a\n")
    (root / "tests").mkdir()
    (root / "tests" / "test.sh").write_text("#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n")
    (root / "solution").mkdir()
    (root / "solution" / "solve.sh").write_text("#!/bin/bash\necho x > /app/out.txt\n")
    for rel, text in (files or {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.fixture()
def host(tmp_path: Path) -> Path:
    """What the attacks aim at: a host folder and a root-only secret file outside the task."""
    (tmp_path / "host").mkdir()
    (tmp_path / "host" / "keep.txt").write_text("keep\n")
    (tmp_path / "outside").mkdir()
    secret = tmp_path / "outside" / "secret.txt"
    secret.write_text(SECRET + "\n")
    secret.chmod(0o600)
    return tmp_path


def snapshot(root: Path, skip: Path | None = None) -> dict[str, tuple]:
    """Every entry under `root` (links not followed) with its type, size and content hash."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if skip is not None and Path(dirpath).is_relative_to(skip):
            dirnames[:] = []
            continue
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            if skip is not None and p.is_relative_to(skip):
                continue
            st = p.lstat()
            body = os.readlink(p) if p.is_symlink() else (p.read_bytes() if p.is_file() else b"")
            out[str(p.relative_to(root))] = (st.st_mode, st.st_size, hash(body))
    return out


def texts(folder: Path) -> str:
    """Everything readable in an imported task, archives unpacked, links' targets included."""
    parts = []
    for p in sorted(folder.rglob("*")):
        if p.is_symlink():
            parts.append(os.readlink(p))
        elif p.is_file():
            data = p.read_bytes()
            if p.name.endswith(".tar.gz"):  # unless a COPY laid another file under that name
                try:
                    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
                        for m in tar.getmembers():
                            parts.append(m.name + " " + m.linkname)
                            f = tar.extractfile(m) if m.isreg() else None
                            parts.append(f.read().decode("utf-8", "replace") if f else "")
                    data = gzip.decompress(data)
                except (tarfile.TarError, OSError, EOFError):
                    pass
            parts.append(data.decode("utf-8", "replace"))
    return "\n".join(parts)


def assert_no_leak(folder: Path) -> None:
    blob = texts(folder)
    assert SECRET not in blob
    assert base64.b64encode((SECRET + "\n").encode()).decode() not in blob
    for p in folder.rglob("*"):  # no link in the task leads out of it
        if p.is_symlink():
            assert Path(os.path.realpath(p)).is_relative_to(folder.resolve()), (p, os.readlink(p))


def notes_of(task: Path) -> list[str]:
    return yaml.safe_load((task / "task.yaml").read_text())["metadata"]["harbor"]["unsupported_setup"]


def state_files(task: Path) -> list[str]:
    state = task / "state"
    return sorted(p.relative_to(state).as_posix() for p in state.rglob("*") if p.is_file() or p.is_symlink())


# -- writes outside the task ---------------------------------------------------------------------------
def test_copy_from_above_the_build_context_is_refused(host: Path) -> None:
    src = make_task(host / "src", "FROM debian\nWORKDIR /app\nCOPY ../../etc/x /app\n"
                    "COPY ../../outside/secret.txt /app/\nCOPY a.txt .\n")
    before = snapshot(host, skip=host / "tasks")
    out = import_harbor(src, host / "tasks", replay_steps=False)
    assert state_files(out) == ["a.txt"]
    assert sum("not in the build context" in n for n in notes_of(out)) == 2
    assert snapshot(host, skip=host / "tasks") == before
    assert_no_leak(out)


def test_copy_to_a_path_that_climbs_out_lands_nowhere_on_the_host(host: Path) -> None:
    # state/ is tasks/terminal/harbor/t/state: four `..` reach tasks/, five reach the test's folder
    src = make_task(host / "src", "FROM debian\nWORKDIR /app\nCOPY a.txt /app/../../../../../pwned.txt\n"
                    "COPY a.txt ../../../../../../../../../../../../tmp/envhub-pwned-issue40.txt\n"
                    "COPY a.txt ./sub/../b.txt\n")
    before = snapshot(host, skip=host / "tasks")
    out = import_harbor(src, host / "tasks", replay_steps=False)
    assert not (host / "pwned.txt").exists() and not (host / "tasks" / "pwned.txt").exists()
    assert not Path("/tmp/envhub-pwned-issue40.txt").exists() and not Path("/pwned.txt").exists()
    assert snapshot(host, skip=host / "tasks") == before
    assert state_files(out) == ["b.txt"]  # `./sub/../b.txt` is /app/b.txt, as Docker reads it
    assert sum("outside the work dir" in n for n in notes_of(out)) == 2


@pytest.mark.parametrize("workdir", ["../../..", "/app/../../../../../pwned-dir", "../../../../../pwned-dir"])
def test_a_workdir_that_climbs_out_creates_nothing_on_the_host(host: Path, workdir: str) -> None:
    src = make_task(host / "src", f"FROM debian\nWORKDIR /app\nWORKDIR {workdir}\nCOPY a.txt .\nWORKDIR sub\n"
                    f"WORKDIR ..\n")
    before = snapshot(host, skip=host / "tasks")
    out = import_harbor(src, host / "tasks", replay_steps=False)
    assert snapshot(host, skip=host / "tasks") == before
    assert not (host / "pwned-dir").exists() and not (host / "tasks" / "pwned-dir").exists()
    harbor = yaml.safe_load((out / "task.yaml").read_text())["metadata"]["harbor"]
    assert harbor["workdir"] == "/" + os.path.normpath("/app/" + workdir).lstrip("/")  # folded as Docker does
    assert state_files(out) == ["a.txt"]


def test_a_copy_through_a_link_laid_by_an_earlier_copy_stays_inside(host: Path) -> None:
    """The first COPY lays `d/out -> host/` (and a relative one climbing out); the next ones
    write through them. Neither link is kept, and nothing reaches the host folder."""
    src = make_task(host / "src", "FROM debian\nWORKDIR /app\nCOPY d /app/d\nCOPY a.txt /app/d/out/evil.txt\n"
                    "COPY a.txt /app/d/up/evil2.txt\nADD bundle.tar /app/d/out/\nCOPY a.txt /app/d/in/\n")
    ctx = src / "environment"
    (ctx / "d").mkdir()
    os.symlink(host / "host", ctx / "d" / "out")
    os.symlink("../" * 12 + str(host / "host").lstrip("/"), ctx / "d" / "up")
    (ctx / "d" / "real").mkdir()
    os.symlink("real", ctx / "d" / "in")  # a link that stays inside is kept, as a link
    with tarfile.open(ctx / "bundle.tar", "w") as tar:
        data = b"evil\n"
        info = tarfile.TarInfo("evil3.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    before = snapshot(host, skip=host / "tasks")
    out = import_harbor(src, host / "tasks", replay_steps=False)
    assert snapshot(host, skip=host / "tasks") == before
    assert sorted(p.name for p in (host / "host").iterdir()) == ["keep.txt"]
    state = out / "state"
    assert not (state / "d" / "out").is_symlink() and not (state / "d" / "up").is_symlink()
    assert os.readlink(state / "d" / "in") == "real" and (state / "d" / "real" / "a.txt").read_text() == "a\n"
    assert_no_leak(out)


def test_a_run_step_that_lays_a_link_cannot_redirect_a_later_copy(host: Path) -> None:
    """RUN steps run in the sandbox as another uid; a link they leave to a host folder is neither
    written through by a later COPY nor kept in the state."""
    src = make_task(host / "src", f"FROM debian\nWORKDIR /app\nRUN ln -s {host / 'host'} out && "
                    f"ln -s {host / 'outside' / 'secret.txt'} s\nCOPY a.txt /app/out/evil.txt\nCOPY a.txt /app/out\n")
    before = snapshot(host, skip=host / "tasks")
    out = import_harbor(src, host / "tasks")
    assert snapshot(host, skip=host / "tasks") == before
    assert not (out / "state" / "s").exists() and not (out / "state" / "s").is_symlink()
    assert_no_leak(out)


# -- host files copied in ------------------------------------------------------------------------------
def test_links_in_the_build_context_are_never_dereferenced(host: Path) -> None:
    src = make_task(host / "src", "FROM debian\nWORKDIR /app\nCOPY . .\n")
    ctx = src / "environment"
    os.symlink("/etc/shadow", ctx / "shadow")
    os.symlink(host / "outside" / "secret.txt", ctx / "secret")
    os.symlink("../../outside", ctx / "outdir")
    (ctx / "sub").mkdir()
    os.symlink("../a.txt", ctx / "sub" / "alias")  # inside: kept as a link
    out = import_harbor(src, host / "tasks", replay_steps=False)
    assert state_files(out) == ["a.txt", "sub/alias"]
    assert os.readlink(out / "state" / "sub" / "alias") == "../a.txt"
    assert sum("leaves" in n for n in notes_of(out)) == 3
    assert_no_leak(out)
    if os.access("/etc/shadow", os.R_OK) and Path("/etc/shadow").read_text().strip():
        assert Path("/etc/shadow").read_text().splitlines()[0] not in texts(out)


def test_a_named_copy_of_a_link_that_leaves_is_refused(host: Path) -> None:
    src = make_task(host / "src", "FROM debian\nWORKDIR /app\nCOPY secret /app/\nCOPY a.txt .\n")
    os.symlink(host / "outside" / "secret.txt", src / "environment" / "secret")
    out = import_harbor(src, host / "tasks", replay_steps=False)
    assert state_files(out) == ["a.txt"]
    assert_no_leak(out)


def test_links_in_tests_and_solution_are_never_dereferenced(host: Path) -> None:
    src = make_task(host / "src")
    os.symlink(host / "outside" / "secret.txt", src / "tests" / "data.txt")
    os.symlink(host / "outside", src / "tests" / "fixtures")
    os.symlink(host / "outside" / "secret.txt", src / "solution" / "answer.txt")
    os.symlink("solve.sh", src / "solution" / "again.sh")  # inside: kept as a link
    printed: list[str] = []
    out = import_harbor(src, host / "tasks", replay_steps=False, log=printed.append)
    assert_no_leak(out)
    assert not (out / "tests" / ".harbor" / "data.txt").exists()
    solve = (out / "solution" / "solve.sh").read_text()
    assert "answer.txt" not in solve.split("# --- original solution ---")[0].replace("warning", "")
    assert "ln -sf solve.sh /tmp/solution/again.sh" in solve
    assert sum("leaves" in line for line in printed) >= 3


@pytest.mark.parametrize("rel", ["instruction.md", "task.toml", "tests", "environment/Dockerfile",
                                 "solution/solve.sh", "environment"])
def test_a_task_file_that_is_a_link_out_of_the_folder_is_refused(host: Path, rel: str) -> None:
    src = make_task(host / "src")
    target = src / rel
    moved = host / "outside" / ("moved-" + target.name)
    target.rename(moved)
    os.symlink(moved, target)
    with pytest.raises(TaskFormatError, match=f"{rel}: a link that leaves the task folder"):
        import_harbor(src, host / "tasks", replay_steps=False)
    assert not (host / "tasks").exists() or not any((host / "tasks").rglob("task.yaml"))


# -- hidden content handed to the agent ----------------------------------------------------------------
def test_a_dockerfile_that_copies_nothing_gives_an_empty_workspace(host: Path) -> None:
    """A desktop task's secret and a simulated user's persona sit in the build context for
    sidecars; the Dockerfile copies none of it, so the agent sees none of it."""
    src = make_task(host / "src", "FROM debian\nWORKDIR /app\nRUN true\n",
                    {"environment/user-sim/persona.md": "hidden persona\n",
                     "environment/secret_code.txt": "1234\n"})
    out = import_harbor(src, host / "tasks", replay_steps=False)
    assert state_files(out) == []
    assert "hidden persona" not in texts(out / "state") and "1234" not in texts(out / "state")
    harbor = yaml.safe_load((out / "task.yaml").read_text())["metadata"]["harbor"]
    assert harbor["state_from"].startswith("nothing")


def test_no_dockerfile_gives_an_empty_workspace(host: Path) -> None:
    src = make_task(host / "src", None, {"environment/docker-compose.yaml": "services: {}\n",
                                         "environment/persona.md": "hidden persona\n"})
    out = import_harbor(src, host / "tasks", replay_steps=False)
    assert state_files(out) == []


def test_copy_of_the_whole_context_honours_dockerignore(host: Path) -> None:
    src = make_task(host / "src", "FROM debian\nWORKDIR /app\nCOPY . .\n",
                    {"environment/.dockerignore": "secrets\n*.key\n!keep.key\n",
                     "environment/secrets/code.txt": "1234\n", "environment/x.key": "k\n",
                     "environment/keep.key": "k\n"})
    out = import_harbor(src, host / "tasks", replay_steps=False)
    assert state_files(out) == ["a.txt", "keep.key"]


# -- tarballs ------------------------------------------------------------------------------------------
def _tar(path: Path, members: list[tarfile.TarInfo | tuple[str, bytes]]) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for m in members:
            if isinstance(m, tuple):
                info = tarfile.TarInfo(m[0])
                info.size = len(m[1])
                tar.addfile(info, io.BytesIO(m[1]))
            else:
                tar.addfile(m)


def _link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


def test_hostile_tarball_members_land_inside_or_nowhere(host: Path) -> None:
    src = make_task(host / "src", "FROM debian\nWORKDIR /app\nADD bundle.tar.gz /app/vendor/\n")
    fifo = tarfile.TarInfo("fifo")
    fifo.type = tarfile.FIFOTYPE
    dev = tarfile.TarInfo("null")
    dev.type, dev.devmajor, dev.devminor = tarfile.CHRTYPE, 1, 3
    _tar(src / "environment" / "bundle.tar.gz", [
        ("ok.txt", b"ok\n"),
        ("../../../../../../escaped.txt", b"x"),
        ("/abs/inside.txt", b"abs\n"),  # Docker unpacks an absolute member under the destination
        _link("etc", "/etc"), ("etc/pwned.txt", b"x"),
        _link("host", str(host / "host")), ("host/pwned.txt", b"x"),
        _link("up", "../" * 10 + "outside/secret.txt"),
        _link("hard", str(host / "outside" / "secret.txt"), tarfile.LNKTYPE),
        _link("hard2", "../../outside/secret.txt", tarfile.LNKTYPE),
        _link("same", "ok.txt"),  # inside: kept
        fifo, dev,
    ])
    before = snapshot(host, skip=host / "tasks")
    out = import_harbor(src, host / "tasks", replay_steps=False)
    assert snapshot(host, skip=host / "tasks") == before
    assert not Path("/etc/pwned.txt").exists() and not Path("/escaped.txt").exists()
    # the links `etc` and `host` were refused, so what the archive put "through" them is a real folder
    assert state_files(out) == ["vendor/abs/inside.txt", "vendor/etc/pwned.txt", "vendor/host/pwned.txt",
                                "vendor/ok.txt", "vendor/same"]
    skipped = [n for n in notes_of(out) if "bundle.tar.gz" in n]
    assert len(skipped) >= 8, skipped
    assert_no_leak(out)


def test_a_damaged_tarball_is_one_clear_error(host: Path) -> None:
    src = make_task(host / "src", "FROM debian\nWORKDIR /app\nADD bundle.tar.gz /app/\n")
    good = io.BytesIO()
    with tarfile.open(fileobj=good, mode="w:gz") as tar:
        info = tarfile.TarInfo("big.txt")
        info.size = 100_000
        tar.addfile(info, io.BytesIO(os.urandom(100_000)))
    (src / "environment" / "bundle.tar.gz").write_bytes(good.getvalue()[:2000])
    with pytest.raises(TaskFormatError, match="bundle.tar.gz"):
        import_harbor(src, host / "tasks", replay_steps=False)


# -- malformed task.toml ------------------------------------------------------------------------------
BAD_TOML = {
    "agent.timeout_sec": "[agent]\ntimeout_sec = inf\n",
    "verifier.timeout_sec": "[verifier]\ntimeout_sec = nan\n",
    "agent.timeout_sec ": "[agent]\ntimeout_sec = [1, 2]\n",
    "verifier.timeout_sec ": "[verifier]\ntimeout_sec = -5\n",
    "environment.memory_mb": "[environment]\nmemory_mb = inf\n",
    "environment.memory": "[environment]\nmemory = \"lots\"\n",
    "environment.cpus": "[environment]\ncpus = inf\n",
    "environment.build_timeout_sec": "[environment]\nbuild_timeout_sec = \"soon\"\n",
    "environment.allow_internet": "[environment]\nallow_internet = \"no\"\n",
    "verifier.env": "[verifier]\nenv = [\"A=1\"]\n",
    "metadata.tags": "[metadata]\ntags = 7\n",
    "task.name": "[task]\nname = \"" + "n" * 5000 + "\"\n",
    "task.name ": "[task]\nname = {a = 1}\n",
    "environment": "environment = 3\n",
    "agent.timeout_sec  ": "[agent]\ntimeout_sec = 1e400\n",
    "environment.memory_mb ": "[environment]\nmemory_mb = 99999999999999999999\n",
    "task.toml: not valid TOML": "[agent\n",
}


@pytest.mark.parametrize("field", list(BAD_TOML))
def test_a_malformed_task_toml_value_is_one_line_naming_the_field(host: Path, field: str) -> None:
    src = make_task(host / "src", toml=BAD_TOML[field])
    with pytest.raises(TaskFormatError) as e:
        import_harbor(src, host / "tasks", replay_steps=False)
    message = e.value.detail
    assert field.strip() in message and "\n" not in message and len(message) < 400, message


def test_files_that_are_not_utf8_are_one_clear_error(host: Path) -> None:
    for rel in ("instruction.md", "task.toml", "environment/Dockerfile", "solution/solve.sh"):
        src = make_task(host / rel.replace("/", "-"))
        (src / rel).write_bytes(b"\xff\xfe\x00bad")
        with pytest.raises(TaskFormatError, match=rel.split("/")[-1] + ".*UTF-8"):
            import_harbor(src, host / "tasks", replay_steps=False)


@pytest.mark.parametrize("line", ['COPY "a.txt /app/', "COPY [1, 2]", 'ENV A="unclosed', "COPY {} /app"])
def test_a_malformed_dockerfile_line_is_one_clear_error(host: Path, line: str) -> None:
    src = make_task(host / "src", f"FROM debian\nWORKDIR /app\n{line}\n")
    try:
        out = import_harbor(src, host / "tasks", replay_steps=False)
    except TaskFormatError as e:
        assert "Dockerfile" in e.detail and "\n" not in e.detail
    else:
        assert any(line.split()[0] in n for n in notes_of(out))


# -- collisions and batches ----------------------------------------------------------------------------
def test_two_sources_that_slug_alike_do_not_overwrite_each_other(host: Path) -> None:
    one = make_task(host / "one", name="Word Stats")
    two = make_task(host / "two", name="word-stats")
    (two / "environment" / "a.txt").write_text("two\n")
    out = import_harbor(one, host / "tasks", replay_steps=False)
    with pytest.raises(TaskFormatError, match="exists"):
        import_harbor(two, host / "tasks", replay_steps=False)
    assert (out / "state" / "a.txt").read_text() == "a\n"
    assert import_harbor(two, host / "tasks", replay_steps=False, overwrite=True) == out
    assert (out / "state" / "a.txt").read_text() == "two\n"


def test_a_forced_reimport_that_fails_keeps_the_old_task(host: Path) -> None:
    src = make_task(host / "src")
    out = import_harbor(src, host / "tasks", replay_steps=False)
    (src / "task.toml").write_text(TOML.format(name="t") + "cpus = inf\n")
    with pytest.raises(TaskFormatError):
        import_harbor(src, host / "tasks", replay_steps=False, overwrite=True)
    assert (out / "state" / "a.txt").read_text() == "a\n" and (out / "task.yaml").is_file()


def test_a_batch_goes_on_past_bad_folders_and_reports_each(host: Path) -> None:
    from envhub.cli import app

    good = make_task(host / "good", name="good")
    bad = make_task(host / "bad", toml="[agent]\ntimeout_sec = inf\n")
    same = make_task(host / "same", name="GOOD")
    later = make_task(host / "later", name="later")
    args = ["import", "harbor", str(good), str(bad), str(host / "missing"), str(same), str(later),
            "--dest", str(host / "tasks"), "--replay", "none"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 1, res.output
    assert "Traceback" not in res.output
    for word in ("imported", "refused", "agent.timeout_sec", "exists"):
        assert word in res.output, res.output
    assert (host / "tasks" / "terminal" / "harbor" / "later" / "task.yaml").is_file()
    res = CliRunner().invoke(app, [*args, "--json", "--force"])
    rows = json.loads(res.stdout)
    assert [r["status"] for r in rows] == ["imported", "refused", "refused", "imported", "imported"], rows
    assert "agent.timeout_sec" in rows[1]["error"] and rows[0]["id"] == "terminal/harbor/good"
    assert all(isinstance(r["warnings"], list) for r in rows)


# -- path variables, PATH, fields not honoured ---------------------------------------------------------
def test_path_variables_with_defaults_are_rewritten() -> None:
    m = {"/app": "/workspace"}
    assert remap('DIR="${APP_DIR:-/app}"; cd ${X-/app/src} ${Y:=/app}', m) == \
        'DIR="${APP_DIR:-/workspace}"; cd ${X-/workspace/src} ${Y:=/workspace}'
    assert remap("${A:-/apple} ${B:-/app.d}", m) == "${A:-/apple} ${B:-/app.d}"


def test_path_variables_in_tests_and_solution_are_rewritten(host: Path) -> None:
    src = make_task(host / "src", files={"tests/test.sh": 'cd "${APP:-/app}"\necho 1 > ${LOGS:-/logs}/verifier/r\n',
                                         "solution/solve.sh": 'cd ${APP_DIR:-/app}\n'})
    out = import_harbor(src, host / "tasks", replay_steps=False)
    assert (out / "tests" / ".harbor" / "test.sh").read_text() == \
        'cd "${APP:-/tmp/harbor/app}"\necho 1 > ${LOGS:-/tmp/harbor/logs}/verifier/r\n'
    assert "cd ${APP_DIR:-/workspace}" in (out / "solution" / "solve.sh").read_text()


def test_harbors_current_task_fields_are_read(host: Path) -> None:
    """Harbor 0.25's task template (its wheel's cli/template-adapter/task-template/task.toml):
    `schema_version`, `[task] authors` and `keywords` are read, not warned about; the keywords
    become tags."""
    toml = ('schema_version = "1.0"\n[task]\nname = "org/bench__t1"\nauthors = [{ name = "A", email = "a@x" }]\n'
            'keywords = ["kw1", "kw2"]\n[metadata]\ndifficulty = "easy"\n[verifier]\ntimeout_sec = 120.0\n'
            '[agent]\ntimeout_sec = 120.0\n[environment]\nbuild_timeout_sec = 600.0\n')
    src = make_task(host / "src", toml=toml)
    printed: list[str] = []
    out = import_harbor(src, host / "tasks", replay_steps=False, log=printed.append)
    assert not [line for line in printed if line.startswith("warning:")], printed
    cfg = yaml.safe_load((out / "task.yaml").read_text())
    assert out.name == "bench__t1" and {"kw1", "kw2"} <= set(cfg["tags"])
    assert cfg["metadata"]["harbor"]["authors"] == [{"name": "A", "email": "a@x"}]


def test_fields_not_honoured_are_warned_about(host: Path) -> None:
    toml = TOML.format(name="t") + ('storage_mb = 10240\ngpus = 1\nallow_internet = true\ndocker_image = "x/y:1"\n'
                                    'shiny = 1\n[[environment.mcp_servers]]\nname = "m"\ntransport = "stdio"\n'
                                    '[solution]\nenv = {A = "1"}\n[weird]\nx = 1\n')
    toml = "odd_top = 3\n" + toml
    src = make_task(host / "src", toml=toml)
    printed: list[str] = []
    out = import_harbor(src, host / "tasks", replay_steps=False, log=printed.append)
    warned = [line for line in printed if line.startswith("warning:")]
    for key in ("storage_mb", "gpus", "allow_internet", "docker_image", "environment.shiny", "mcp_servers",
                "[weird]", "odd_top = 3"):
        assert any(key in line for line in warned), (key, warned)
    assert all(line.removeprefix("warning: ") in notes_of(out) for line in warned)
    assert "export A=1" in (out / "solution" / "solve.sh").read_text()  # [solution] env is honoured
    assert not any("memory_mb" in line or "timeout_sec" in line for line in warned)


def test_path_variables_with_defaults_in_a_dockerfile(host: Path) -> None:
    """`WORKDIR ${APP_DIR:-/app}` is the work dir /app, and a RUN step's `${APP_DIR:-/app}` is the
    workspace, as plain `/app` is."""
    src = make_task(host / "src", 'FROM debian\nARG APP_DIR\nWORKDIR ${APP_DIR:-/app}\nCOPY a.txt .\n'
                    'RUN cp "${APP_DIR:-/app}/a.txt" "${OUT:-/app/b.txt}"\n')
    out = import_harbor(src, host / "tasks")
    assert yaml.safe_load((out / "task.yaml").read_text())["metadata"]["harbor"]["workdir"] == "/app"
    assert state_files(out) == ["a.txt", "b.txt"], notes_of(out)
