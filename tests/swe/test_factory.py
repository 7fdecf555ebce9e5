"""The SWE task factory end to end on a small package made here: pinned source, fetch, unpack,
synthesis by execution, the task folder, its base built again from the store, the leak check."""

from __future__ import annotations

import hashlib
import io
import json
import re
import shutil
import tarfile
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from envhub.errors import EnvError, RequirementMissing, TaskInvalid
from envhub.tasks.model import Task
from environments.swe import source
from environments.swe.authoring import VERIFIER
from environments.swe.factory import fetch, packages, prompts
from environments.swe.validate import _files_by_name, fixed_hunks, visible_copies
from tests.swe.conftest import require_toolchain

LIB = textwrap.dedent('''\
    """A small library: enough logic for its tests to catch a bug."""


    def clamp(x, lo, hi):
        if x < lo:
            return lo
        if x > hi:
            return hi
        return x


    def chunks(seq, n):
        out = []
        for i in range(0, len(seq), n):
            out.append(seq[i:i + n])
        return out


    def mean(xs):
        if not xs:
            raise ValueError("mean of nothing")
        return sum(xs) / len(xs)


    def span(xs):
        return max(xs) - min(xs)
    ''')
TESTS = textwrap.dedent('''\
    import pytest
    from minilib import chunks, clamp, mean, span


    def test_clamp_low():
        assert clamp(-5, 0, 10) == 0


    def test_clamp_high():
        assert clamp(50, 0, 10) == 10


    def test_clamp_inside():
        assert clamp(7, 0, 10) == 7


    def test_clamp_edge():
        assert clamp(0, 0, 10) == 0


    def test_chunks_even():
        assert chunks([1, 2, 3, 4], 2) == [[1, 2], [3, 4]]


    def test_chunks_rest():
        assert chunks([1, 2, 3], 2) == [[1, 2], [3]]


    def test_chunks_empty():
        assert chunks([], 3) == []


    def test_mean():
        assert mean([1, 2, 3, 6]) == 3


    def test_mean_one():
        assert mean([4]) == 4


    def test_mean_empty():
        with pytest.raises(ValueError):
            mean([])


    def test_span():
        assert span([3, 9, 4]) == 6


    def test_span_one():
        assert span([5]) == 0
    ''')


def _tarball(dest: Path) -> Path:
    files = {"minilib-1.0/minilib/__init__.py": LIB, "minilib-1.0/minilib/crlf.py": LIB.replace("\n", "\r\n"),
             "minilib-1.0/tests/test_minilib.py": TESTS,
             "minilib-1.0/README.md": "minilib\n", "minilib-1.0/docs/copy.txt": "excluded\n"}
    path = dest / "minilib-1.0.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def manifests(tmp_path: Path) -> Path:
    """A manifest folder pinning minilib 1.0 (a local file: URL stands in for the registry's)."""
    tarball = _tarball(tmp_path)
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    entry = {"id": "pypi/minilib-1.0", "registry": "pypi", "name": "minilib", "version": "1.0",
             "language": "python", "unpack": "archive", "exclude": ["docs/**"],
             "files": [{"name": tarball.name, "sha256": digest, "url": tarball.as_uri()}],
             "test_command": "/usr/bin/python3 -m pytest -q -p no:cacheprovider "
                             "--junitxml=$REPORT_DIR/junit.xml tests $TEST_ARGS",
             "report": {"format": "junit_xml", "file": "junit.xml"},
             "protected_paths": ["tests/**", "conftest.py", "pytest.ini", "setup.cfg", "pyproject.toml"],
             "source_globs": ["minilib/**/*.py"], "test_globs": ["tests/**"], "suite_s": 1, "tests": 12}
    root = tmp_path / "manifests"
    root.mkdir()
    (root / "pypi.yaml").write_text(yaml.safe_dump([entry]))
    packages.load_all.cache_clear()
    yield root
    packages.load_all.cache_clear()


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    d = tmp_path / "data"
    d.mkdir(mode=0o755)
    tmp_path.chmod(0o755)  # the jail's uid reads the trees under it
    return d


def test_fetch_checks_the_digest_and_stores_by_content(manifests, data_dir):
    pkg = packages.find("minilib==1.0", manifests)
    assert source.missing(pkg.source, data_dir) == list(pkg.source.files)
    with pytest.raises(RequirementMissing) as e:
        source.tree(pkg.source, data_dir)
    assert e.value.extra["fix"] == "envhub swe sources fetch pypi/minilib-1.0"
    got = fetch.fetch(pkg, data_dir, apt=False)
    assert got.stored == ["minilib-1.0.tar.gz"] and got.bytes > 0
    assert source.blob(data_dir, pkg.source.files[0]).is_file()
    assert fetch.fetch(pkg, data_dir, apt=False).stored == []  # idempotent
    tree = source.tree(pkg.source, data_dir)
    # the top folder stripped, docs/ excluded
    assert sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file()) == \
        ["README.md", "minilib/__init__.py", "minilib/crlf.py", "tests/test_minilib.py"]


def test_a_pinned_digest_that_differs_is_refused(manifests, data_dir, tmp_path):
    raw = yaml.safe_load((manifests / "pypi.yaml").read_text())
    raw[0]["files"][0]["sha256"] = "0" * 64
    (manifests / "pypi.yaml").write_text(yaml.safe_dump(raw))
    packages.load_all.cache_clear()
    with pytest.raises(fetch.FetchError, match="is not the pinned"):
        fetch.fetch(packages.find("minilib", manifests), data_dir, apt=False)
    assert not source.store_dir(data_dir).exists() or not any(source.store_dir(data_dir).iterdir())


def test_a_store_file_changed_after_the_fetch_is_an_env_error(manifests, data_dir):
    pkg = packages.find("minilib", manifests)
    fetch.fetch(pkg, data_dir, apt=False)
    blob = source.blob(data_dir, pkg.source.files[0])
    blob.write_bytes(b"tampered")
    with pytest.raises(EnvError, match="delete it"):
        source.tree(pkg.source, data_dir)


def test_unsafe_archive_entries_are_refused(data_dir, tmp_path):
    bad = tmp_path / "bad.tar.gz"
    with tarfile.open(bad, "w:gz") as tar:
        info = tarfile.TarInfo("x/../../escape.txt")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    digest = hashlib.sha256(bad.read_bytes()).hexdigest()
    source.store_dir(data_dir).mkdir(parents=True)
    shutil.copy(bad, source.store_dir(data_dir) / digest)
    src = source.Source.from_metadata({"id": "pypi/bad-1", "files": [{"name": "bad.tar.gz", "sha256": digest}]})
    with pytest.raises(EnvError, match="unsafe entry"):
        source.tree(src, data_dir)
    assert not (tmp_path / "escape.txt").exists()


@pytest.mark.parametrize("raw", [
    {"id": "x", "files": []},
    {"id": "x", "files": [{"name": "../a.tgz", "sha256": "a" * 64}]},
    {"id": "x", "files": [{"name": "a.tgz", "sha256": "nothex"}]},
    {"id": "x", "files": [{"name": "a.tgz", "sha256": "a" * 64}], "unpack": "magic"},
    {"files": [{"name": "a.tgz", "sha256": "a" * 64}]},
])
def test_bad_source_metadata_is_task_invalid(raw):
    with pytest.raises(TaskInvalid):
        source.Source.from_metadata(raw)


def test_a_manifest_entry_without_its_fields_is_named(tmp_path):
    (tmp_path / "npm.yaml").write_text(yaml.safe_dump([{"id": "npm/x-1", "registry": "npm", "language": "javascript"}]))
    with pytest.raises(packages.PackageError, match="npm/x-1"):
        packages.load_all(tmp_path)


def test_the_leak_check_finds_the_fix_in_the_checkout_and_in_the_host_view(tmp_path):
    gold = textwrap.dedent('''\
        diff --git a/lib/core.py b/lib/core.py
        --- a/lib/core.py
        +++ b/lib/core.py
        @@ -1,4 +1,4 @@
         def clamp(x, lo, hi):
        -    if x <= lo:
        +    if x < lo:
                 return lo
             return min(x, hi)
        ''')
    clean = "def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    return min(x, hi)\n"
    assert fixed_hunks(gold) == {"lib/core.py": [clean]}
    base = tmp_path / "base"
    (base / "lib").mkdir(parents=True)
    (base / "lib" / "core.py").write_text(clean.replace("x < lo", "x <= lo"))
    host = tmp_path / "usr"
    (host / "lib" / "python3" / "lib").mkdir(parents=True)
    assert visible_copies(base, gold, host_view=(str(host),)) == []
    (host / "lib" / "python3" / "lib" / "core.py").write_text("# installed copy\n" + clean)
    (base / "build").mkdir()
    (base / "build" / "core_copy.py").write_text(clean)
    _files_by_name.cache_clear()  # the host view is indexed once per process (a validation run)
    assert visible_copies(base, gold, host_view=(str(host),)) == sorted(
        [str(base / "build" / "core_copy.py"), str(host / "lib" / "python3" / "lib" / "core.py")])


def test_synth_makes_tasks_whose_base_rebuilds_from_the_store(manifests, data_dir, tmp_path):
    """Synthesis by execution over minilib: kept bugs fail some tests stably, the task pins the
    source, the base built again from the store is the recorded commit, and the gold patch
    restores the clean file; the prompt names no test, test file or mutated line."""
    require_toolchain("python")
    from environments.swe.factory.synth import Synthesiser
    from environments.swe.repo import clone_base
    from verifiers.swe import apply_patch

    pkg = packages.find("minilib", manifests)
    fetch.fetch(pkg, data_dir, apt=False)
    tasks_root = tmp_path / "tasks"
    judged: list[Path] = []

    def gate(task_dir: Path) -> tuple[str, dict[str, str]]:  # the validation gate's verdict: the first is refused
        judged.append(task_dir)
        return ("rejected", {"family:swe-twins": "1 qualified twin"}) if len(judged) == 1 else ("validated", {})

    report = Synthesiser(pkg, tasks_root=tasks_root, data_dir=data_dir, seed=3, runs=2, gate=gate).synth(2, pairs=0.0)
    assert report.clean_tests == 12
    assert report.kept, report.as_dict()["outcomes"]
    assert {a.outcome for a in report.attempts} <= {"kept", "survived", "broke-build", "no-report", "too-many",
                                                    "unstable", "no-base", "mute", "no-twins", "name-taken",
                                                    "unpinned", "rejected"}
    assert report.as_dict()["rejected_by"] == {"family:swe-twins": 1}
    spent = report.as_dict()["outcome_seconds"]
    assert set(spent) == {a.outcome for a in report.attempts} and spent["kept"] > 0
    assert not judged[0].exists() and len(judged) == len(report.kept) + 1  # a rejected task is deleted
    from environments.swe.cli import _yield

    made = _yield(tasks_root / "swe" / "python" / "minilib")  # `envhub swe sources list`'s columns
    assert (made["tasks"], made["kept"], made["tried"]) == (len(report.kept), len(report.kept), report.tried)
    lines = set()
    for task_id in report.kept:
        task = Task.load(tasks_root / task_id)
        meta = task.config.metadata
        assert meta["source"]["id"] == "pypi/minilib-1.0" and not (task.path / "state").exists()
        assert (task.tests_dir / "protected.tar").is_symlink() and (task.tests_dir / "protected.tar").is_file()
        assert not (task.tests_dir / "test.patch").exists()
        tests = json.loads((task.tests_dir / "tests.json").read_text())
        assert tests["FAIL_TO_PASS"] and len(tests["FAIL_TO_PASS"]) + len(tests["PASS_TO_PASS"]) == 12
        assert len(json.loads((task.tests_dir / "twins.json").read_text())["twins"]) >= 2
        mutation = meta["factory"]["mutations"][0]
        name = task_id.rsplit("/", 1)[1]  # ids can reach the policy: they must not say where the bug is
        assert re.fullmatch(r"bug-[0-9a-f]{10}", name), name
        assert (mutation["path"], mutation["line"]) not in lines  # no two tasks share a mutated line
        lines.add((mutation["path"], mutation["line"]))
        repo = tmp_path / f"base-{task.path.name}"
        clone_base(task, repo, data_dir)  # checks the commit is the recorded base_commit
        # the agent's checkout lacks the FAIL_TO_PASS tests (grading restores them), and links nothing
        test_text = "".join(p.read_text() for p in sorted((repo / "tests").glob("test_*.py")))
        for t in tests["FAIL_TO_PASS"]:
            assert f"def {t.rsplit('#', 1)[-1].split('[')[0]}(" not in test_text, t
        assert all(p.stat().st_nlink == 1 for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts)
        clean = (source.tree(pkg.source, data_dir) / mutation["path"]).read_text()
        assert (repo / mutation["path"]).read_text() != clean
        apply_patch(repo, task.solution_dir / "gold.patch")
        assert (repo / mutation["path"]).read_text() == clean
        prompt = (task.path / "prompt.md").read_text()
        clean_line = clean.splitlines()[mutation["line"] - 1].strip()
        assert clean_line not in prompt and "test_" not in prompt and "tests/" not in prompt
        assert "not in this checkout" in prompt  # the agent is told it cannot run them

    # `--rewrite` makes a task anew from its recorded bug: the same bytes when the factory is the same
    task_dir = tasks_root / report.kept[0]
    made_files = {p.name: p.read_bytes() for p in (task_dir / "prompt.md", task_dir / "task.yaml")}
    (task_dir / "prompt.md").write_text("stale\n")
    synth = Synthesiser(pkg, tasks_root=tasks_root, data_dir=data_dir)
    try:
        synth.prepare()
        synth.rewrite(task_dir)
    finally:
        shutil.rmtree(synth.work, ignore_errors=True)
    assert {p.name: p.read_bytes() for p in (task_dir / "prompt.md", task_dir / "task.yaml")} == made_files


#: A forger aimed by name: the report of the named tests is flipped to passed (pytest's own objects).
BY_NAME = """

def _flip_by_name():
    import sys
    reports = sys.modules.get("_pytest.reports")
    if reports is None or getattr(reports, "_flipped", False):
        return
    reports._flipped = True
    made = reports.TestReport.from_item_and_call.__func__

    def from_item_and_call(cls, item, call):
        report = made(cls, item, call)
        if report.failed and item.name in %r:
            report.outcome, report.longrepr = "passed", None
        return report
    reports.TestReport.from_item_and_call = classmethod(from_item_and_call)


_flip_by_name()
"""


def _forge_by_name(test_id: str):
    """A forger (the `FORGERS` shape) that flips the outcome of the one test named `test_id`."""
    def forge(repo: Path, cfg, ids) -> bool:  # noqa: ANN001
        lib = repo / "minilib" / "__init__.py"
        lib.write_text(lib.read_text() + BY_NAME % ({test_id.rsplit("#", 1)[-1]},))
        return True
    return forge


def _validator_controls(task: Task, data_dir: Path, forger, monkeypatch) -> dict:  # noqa: ANN001
    """The validator's graded controls of `task` with `forger` as its only control: its finding."""
    import asyncio
    import tempfile

    from envhub.config import Settings, get_settings
    from envhub.env import ValidationContext
    from envhub.sandbox.local import LocalBackend
    from envhub.verify import runtime
    from envhub.verify.runner import VerifierRunner
    from environments.swe import validate

    monkeypatch.setattr(validate, "CONTROLS", {})
    monkeypatch.setattr(validate, "FORGERS", {"by-name": forger})
    # a data folder the verifier's uid can reach (pytest's own folders are the owner's alone), with
    # the installed verifier site and this test's fetched sources
    root = Path(tempfile.mkdtemp(prefix="swe-validate-", dir="/var/tmp"))
    try:
        root.chmod(0o755)
        (root / "verifier").mkdir(mode=0o755)
        runtime.site_dir(root).symlink_to(runtime.site_dir(get_settings().data_dir).resolve())
        (root / "swe-sources").symlink_to(data_dir / "swe-sources")
        settings = Settings(data_dir=root, tasks_dir=task.path.parents[3])
        backend = LocalBackend(root / "sandboxes")
        runner = VerifierRunner(settings, backend, warm=False)
        runner.prepare()
        checker = validate.SweValidator(task, ValidationContext(settings, backend, runner), runs=1)
        raw = json.loads((task.tests_dir / "tests.json").read_text())
        asyncio.run(checker.controls(raw["FAIL_TO_PASS"], raw["PASS_TO_PASS"]))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return next(f for f in checker.findings if f.check == "swe-control-by-name")


def test_twins_that_would_catch_a_forger_only_by_luck_are_refused(manifests, data_dir, tmp_path, monkeypatch):
    """A kept task's forgers are pinned: each forges a twinned FAIL_TO_PASS test or none. Without a
    twinned FAIL_TO_PASS test, or with a forger that forges only untwinned ones, whether grading's
    drawn PASS_TO_PASS twins expose it is luck: the factory refuses the task (`unpinned`), and the
    validator holds every task to the same rule (its forger controls)."""
    require_toolchain("python")
    from environments.swe.factory.pinned import unpinned
    from environments.swe.factory.synth import Synthesiser
    from verifiers import swe_twins

    pkg = packages.find("minilib", manifests)
    fetch.fetch(pkg, data_dir, apt=False)
    report = Synthesiser(pkg, tasks_root=tmp_path / "tasks", data_dir=data_dir, seed=3, runs=2).synth(1, pairs=0.0)
    assert report.kept, report.as_dict()["outcomes"]
    task = Task.load(tmp_path / "tasks" / report.kept[0])
    f2p = json.loads((task.tests_dir / "tests.json").read_text())["FAIL_TO_PASS"]
    twins = swe_twins.load(task.tests_dir)
    assert unpinned(task, data_dir) == []
    assert len(f2p) >= 2 and set(f2p) <= {t.test for t in twins}, (f2p, twins)  # seed 3: a clamp bug

    # a forger that forges a twinned test is caught in every graded run (its twins pass too)
    assert unpinned(task, data_dir, {"by-name": _forge_by_name(f2p[0])}) == []
    # one that forges only a test without twins goes unseen unless a drawn twin happens to expose it
    swe_twins.dump(task.tests_dir, [t for t in twins if t.test != f2p[1]])
    assert unpinned(task, data_dir, {"by-name": _forge_by_name(f2p[1])}) == [
        f"by-name forges 1 FAIL_TO_PASS test(s), none with a twin (e.g. {f2p[1]})"]
    # the validator's forger controls say the same of the task as it now stands: the forger of the
    # untwinned test rejects it as unpinned (the one of a twinned test is judged on its report)
    unseen = _validator_controls(task, data_dir, _forge_by_name(f2p[1]), monkeypatch)
    assert not unseen.ok and unseen.detail.startswith("unpinned: it forges 1 FAIL_TO_PASS test(s)"), unseen
    pinned = _validator_controls(task, data_dir, _forge_by_name(f2p[0]), monkeypatch)
    assert not pinned.detail.startswith("unpinned"), pinned
    # and no twinned FAIL_TO_PASS test at all is refused before any run
    swe_twins.dump(task.tests_dir, [t for t in twins if t.test not in f2p])
    assert unpinned(task, data_dir) == [f"none of the {len(f2p)} FAIL_TO_PASS tests has a twin"]


def test_a_bug_whose_failing_tests_cannot_be_hidden_or_twinned_is_dropped_after_one_run(manifests, data_dir, tmp_path):
    """The screen after a bug's first run: a FAIL_TO_PASS test that no name or file locates cannot
    leave the checkout ("no-base"), and tests with no literal a twin could change pin no forger
    ("unpinned"); either way the candidate goes before its stability runs, task folder and twins."""
    require_toolchain("python")
    from environments.swe.factory.synth import Synthesiser

    pkg = packages.find("minilib", manifests)
    fetch.fetch(pkg, data_dir, apt=False)
    synth = Synthesiser(pkg, tasks_root=tmp_path / "tasks", data_dir=data_dir, seed=3, runs=2)
    synth.prepare()
    with (synth.clean / "tests" / "test_minilib.py").open("a") as f:
        f.write("\n\nTABLE = [([1, 2], 1)]\n\n\ndef test_span_table():\n    for xs, want in TABLE:\n"
                "        assert span(xs) == want\n")
    assert synth.screen(["tests.test_minilib#test_span", "tests.test_minilib#test_span_table"]) is None
    assert synth.screen(["tests.test_minilib#test_span_table"]) == "unpinned"
    assert synth.screen(["tests.test_minilib#test_span", "tests.test_minilib#test_made_at_run_time"]) == "no-base"
    assert "def test_span_table" in (synth.clean / "tests" / "test_minilib.py").read_text()  # a copy was cut

    # and `judge` asks it right after a bug's first run: a screened-out bug costs that one run
    synth.clean_suite()
    runs, run = [], synth.run
    synth.run = lambda state: runs.append(state) or run(state)
    synth.screen = lambda f2p: "unpinned"
    for [mutation] in synth.candidates():
        runs.clear()
        outcome = synth.judge([mutation], set())[0]
        if outcome not in ("survived", "broke-build", "no-report", "too-many"):
            break
    assert (outcome, len(runs)) == ("unpinned", 1)


def test_a_run_that_hangs_costs_the_factory_a_budget_from_its_clean_suite(manifests, data_dir, tmp_path, monkeypatch):
    """A mutant, or a twin's changed literal, that makes the suite loop ends at the factory's
    budget (ten clean suites, at least RUN_BUDGET_MIN_S), not at the task's verify budget: the
    twins' batches are split through several runs, and tomlkit's first task spent 25 minutes so."""
    require_toolchain("python")
    from environments.swe.factory import synth as synth_mod

    pkg = packages.find("minilib", manifests)
    fetch.fetch(pkg, data_dir, apt=False)
    synth = synth_mod.Synthesiser(pkg, tasks_root=tmp_path / "tasks", data_dir=data_dir, runs=1)
    synth.prepare()
    assert synth.budget_s is None  # the task's own until the clean suite is timed
    synth.clean_suite()
    monkeypatch.setattr(synth_mod, "RUN_BUDGET_MIN_S", 3.0)
    assert synth.budget_s == max(3.0, synth_mod.RUN_BUDGET_TIMES * synth.report.clean_s) < 60
    hung = tmp_path / "hung"
    shutil.copytree(synth.clean, hung, symlinks=True)
    lib = hung / "minilib" / "__init__.py"
    lib.write_text(lib.read_text().replace("def span(xs):\n", "def span(xs):\n    while True:\n        pass\n"))
    started = time.monotonic()
    run = synth.run(hung)
    assert run.problem() and time.monotonic() - started < synth.budget_s + 30


def test_a_source_file_with_crlf_lines_is_never_mutated(manifests, data_dir, tmp_path):
    """Patches are read as text when applied (`verifiers.swe.apply_patch`), which drops the CRs of
    a CRLF file's hunks: its gold patch could never apply, so such a file gets no candidates."""
    from environments.swe.factory.synth import Synthesiser

    pkg = packages.find("minilib", manifests)
    fetch.fetch(pkg, data_dir, apt=False)
    synth = Synthesiser(pkg, tasks_root=tmp_path / "tasks", data_dir=data_dir)
    synth.prepare()
    assert synth.source_files() == ["minilib/__init__.py"]


def test_a_package_may_name_files_made_lf_and_only_those_leave_the_crlf_rule(manifests, data_dir, tmp_path):
    """`lf: [globs]` makes those files' CRLF line ends LF when the source is unpacked (tinyxml2
    ships CRLF sources): they can carry bugs then. The unpacked tree's cache key, and so every
    task of a package without the field, is what it was."""
    import dataclasses

    from environments.swe.factory.synth import Synthesiser

    pkg = packages.find("minilib", manifests)
    fetch.fetch(pkg, data_dir, apt=False)
    plain = pkg.source
    spec = {"files": [[f.name, f.sha256] for f in plain.files], "unpack": plain.unpack, "exclude": plain.exclude,
            "version": source.UNPACK_VERSION}
    assert plain.key == hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:32]
    made_lf = dataclasses.replace(pkg, source=dataclasses.replace(plain, lf=("minilib/crlf.py",)))
    assert made_lf.source.key != plain.key and made_lf.metadata()["source"]["lf"] == ["minilib/crlf.py"]
    assert source.Source.from_metadata(made_lf.metadata()["source"]) == made_lf.source
    tree = source.tree(made_lf.source, data_dir)
    assert b"\r" not in (tree / "minilib" / "crlf.py").read_bytes()
    assert b"\r" in (source.tree(plain, data_dir) / "minilib" / "crlf.py").read_bytes()
    synth = Synthesiser(made_lf, tasks_root=tmp_path / "tasks", data_dir=data_dir)
    synth.prepare()
    assert synth.source_files() == ["minilib/__init__.py", "minilib/crlf.py"]


def test_a_package_may_be_one_folder_of_its_source_and_is_named_by_it(manifests, data_dir, tmp_path):
    """`root: FOLDER` makes that folder of the unpacked tree the package (a crate vendored in
    Debian's `cargo` source): its tree, mutable files and task folder are the folder's, and a
    package without the field keeps its tree's key. A root that leaves the tree is refused."""
    import dataclasses

    from environments.swe.factory.synth import Synthesiser

    pkg = packages.find("minilib", manifests)
    fetch.fetch(pkg, data_dir, apt=False)
    rooted = dataclasses.replace(pkg, source=dataclasses.replace(pkg.source, root="minilib"))
    assert rooted.source.key != pkg.source.key and rooted.metadata()["source"]["root"] == "minilib"
    assert "root" not in pkg.metadata()["source"]
    assert source.Source.from_metadata(rooted.metadata()["source"]) == rooted.source
    assert sorted(p.name for p in source.tree(rooted.source, data_dir).iterdir()) == ["__init__.py", "crlf.py"]
    assert (rooted.slug, pkg.slug) == ("minilib", "minilib")
    as_folder = dataclasses.replace(rooted, source=dataclasses.replace(rooted.source, root="minilib"), name="vendor")
    assert as_folder.slug == "minilib"
    # in the factory's own manifests, a registry's name beats a vendored crate's folder
    assert packages.find("semver").id == "pypi/semver-3.1.2"
    assert packages.find("debian/cargo-0.66.0+ds1-1-semver").slug == "semver"
    synth = Synthesiser(dataclasses.replace(rooted, source_globs=("*.py",)), tasks_root=tmp_path / "tasks",
                        data_dir=data_dir)
    synth.prepare()
    assert synth.source_files() == ["__init__.py"]
    for bad in ("../x", "/etc", "a/../b", "."):
        with pytest.raises(TaskInvalid, match="root"):
            source.Source.from_metadata({**rooted.metadata()["source"], "root": bad})
    with pytest.raises(TaskInvalid, match="no folder 'nowhere'"):
        source.tree(dataclasses.replace(pkg.source, root="nowhere"), data_dir)


def test_a_factory_task_without_its_source_is_unavailable_with_the_fetch_command(manifests, data_dir, tmp_path):
    from envhub.config import get_settings
    from environments.swe.family import SweFamily

    task_dir = tmp_path / "tasks" / "swe" / "python" / "minilib" / "t"
    (task_dir / "tests").mkdir(parents=True)
    meta = {**packages.find("minilib", manifests).metadata(), "base_commit": "0" * 40}
    (task_dir / "task.yaml").write_text(yaml.safe_dump({"id": "swe/python/minilib/t", "family": "swe", "title": "t",
                                                        "metadata": meta}))
    (task_dir / "prompt.md").write_text("x\n")
    (task_dir / "tests" / "test_swe.py").write_text(VERIFIER)
    family = SweFamily()
    family.setup(get_settings().model_copy(update={"data_dir": data_dir}))
    missing = family.availability(Task.load(task_dir))
    assert missing is not None and missing.fix == "envhub swe sources fetch pypi/minilib-1.0"
    fetch.fetch(packages.find("minilib", manifests), data_dir, apt=False)
    assert family.availability(Task.load(task_dir)) is None


def test_prompt_styles_never_name_the_test(manifests):
    from verifiers.swe import RunResult

    pkg = packages.find("minilib", manifests)
    output = textwrap.dedent('''\
        =================================== FAILURES ===================================
        ________________________________ test_clamp_low ________________________________

            def test_clamp_low():
        >       assert clamp(-5, 0, 10) == 0
        E       assert -5 == 0
        E        +  where -5 = clamp(-5, 0, 10)

        tests/test_minilib.py:6: AssertionError
        =========================== short test summary info ============================
        FAILED tests/test_minilib.py::test_clamp_low - assert -5 == 0
        ''')
    gold = ("--- a/minilib/__init__.py\n+++ b/minilib/__init__.py\n@@ -5,1 +5,1 @@\n"
            "-    if x >= lo:\n+    if x < lo:\n")
    import random

    seen = set()
    for seed in range(12):
        issue = prompts.write(pkg, ["tests.test_minilib#test_clamp_low"], RunResult(test_output=output), {"clamp"},
                              gold, Path("/nonexistent"), random.Random(seed))
        seen.add(issue.style)
        assert "test_clamp_low" not in issue.text and "tests/" not in issue.text
        assert "if x < lo:" not in issue.text and "if x >= lo:" not in issue.text
        assert issue.text.strip()
    assert seen <= set(prompts.STYLES) and len(seen) >= 2
    assert any("clamp(-5, 0, 10)" in prompts.write(pkg, ["tests.test_minilib#test_clamp_low"],
                                                   RunResult(test_output=output), {"clamp"}, gold,
                                                   Path("/nonexistent"), random.Random(s)).text for s in range(12))


@pytest.mark.parametrize(("call", "api"), [
    ("next(merge_sorted(a, b))", "merge_sorted"),
    ("list(take(2, xs))", "take"),
    ("tz.valfilter(f, d)", "tz.valfilter"),
    ("len(x)", "len"),
    ("not valid(", "not valid"),
])
def test_a_prompt_title_names_the_library_call_not_the_builtin_around_it(call, api):
    assert prompts._api(call) == api


def test_a_ci_log_excerpt_from_any_runner_keeps_what_the_checks_saw_and_no_test_status():
    """node's spec reporter prints passing tests (whose names may hold "error") and stack frames;
    go prefixes a failure with its test file and line. Only the observations may reach a prompt."""
    output = textwrap.dedent('''\
        ✔ Create error with zero parameter (2.049777ms)
        ✖ Create an error with cause (10.591044ms)
          AssertionError [ERR_ASSERTION]: undefined == Error: HEY
              at TestContext.<anonymous> (/tmp/swe-repo-1/repo/test/index.test.js:195:17)
            actual: undefined,
        --- FAIL: TestParse (0.00s)
            parse_test.go:12: Parse("1.2") = 3, want 4
        not ok 3 - Create an error with cause
              end.not_to raise_error
        {"Action":"output","Package":"p","Test":"TestSum","Output":"    sum_test.go:9: Sum(2, 2) = 5, want 4\\n"}
        {"type":"test","name":"t::it_adds","event":"failed","stdout":"assertion `left == right` failed\\n"}
        === CONT  TestDecode_Nil
        ":"p","Test":"TestDecode_Hook","Output":"=== CONT  TestDecode_Hook\\n"}
        ''') + json.dumps({"type": "test", "name": "test_exact", "event": "failed", "stdout": (
        "thread 'test_exact' panicked at 'assertion failed: `(left == right)`\n  left: `\"=1.0.0x\"`,\n"
        " right: `\"=1.0.0\"`', tests/test_version_req.rs:54:5\n")}) + "\n"
    lines = prompts._assertion_lines(output, lambda s: "with cause" not in s and "TestSum" not in s)
    assert lines == ["AssertionError [ERR_ASSERTION]: undefined == Error: HEY", "actual: undefined,",
                     'Parse("1.2") = 3, want 4', "Sum(2, 2) = 5, want 4", "assertion `left == right` failed",
                     "panicked at 'assertion failed: `(left == right)`", 'left: `"=1.0.0x"`,',
                     """right: `"=1.0.0"`'"""]


def test_a_go_message_that_compares_with_not_equal_says_what_was_seen():
    """montanaflynn/stats writes `t.Errorf("%v != %v", got, want)`: no word says got or want, the
    comparison does (its bugs were all mute)."""
    output = ("--- FAIL: TestMax (0.00s)\n    max_test.go:20: Max([1 2]) => 3.0 != 2.0\n"
              "    stats_test.go:7: 1.5 != 2.5\n--- FAIL: TestLen (0.00s)\nFAIL\n")
    assert prompts._assertion_lines(output, lambda s: True) == ["Max([1 2]) => 3.0 != 2.0", "1.5 != 2.5"]


def test_a_go_suites_failure_messages_reach_the_prompt_past_hundreds_of_passing_tests(tmp_path):
    """The synthesiser prints a `go test -json` report to its console for the prompt; every test's
    start, run and pass events pushed gods' failures (304 tests) out of the output's tail, and all
    its bugs were mute. Only the events that say something are printed."""
    import json
    import subprocess

    from environments.swe.factory.synth import CONSOLE_IN_REPORT

    events = [{"Action": "start", "Package": "p"}]
    for i in range(2000):
        ok = {"Package": "p", "Test": f"TestOk{i}"}
        events += [{"Action": "run", **ok}, {"Action": "output", **ok, "Output": f"=== RUN   TestOk{i}\n"},
                   {"Action": "output", **ok, "Output": f"--- PASS: TestOk{i} (0.00s)\n"}, {"Action": "pass", **ok}]
        if i == 3:
            bad = {"Package": "p", "Test": "TestMax"}
            events += [{"Action": "output", **bad, "Output": "    max_test.go:9: Got 3 expected 2\n"},
                       {"Action": "fail", **bad}]
    (tmp_path / "go.jsonl").write_text("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events))  # as go
    out = subprocess.run(["/bin/bash", "-c", f"{CONSOLE_IN_REPORT['go_test_json']} {tmp_path / 'go.jsonl'}"],
                         capture_output=True, text=True).stdout
    assert len(out) < 1000 and prompts._assertion_lines(out[-32_000:], lambda s: True) == ["Got 3 expected 2"]
    # an event cut by the output's tail, its opening quote gone, names a test: never quoted
    cut = 'Output":"=== RUN   TestECMAOctal expected\\n"}\n' + out
    assert prompts._assertion_lines(cut, lambda s: True) == ["Got 3 expected 2"]


def test_unitys_failure_line_gives_its_message_without_file_or_test_name():
    """cJSON's Unity suites print `FILE:LINE:TEST:FAIL: message`: the file (under tests/) and the
    test's name may not reach a prompt, the message is what the check saw (its bugs were all mute)."""
    output = ("tests/parse_number.c:60:assert_is_number:FAIL: Expected 1 Was 0\n"
              "tests/parse_array.c:99:test_parse_array:FAIL: Expected 'a' Was 'b'. Function x\n"
              "tests/misc_tests.c:12:misc:FAIL\n-----------------------\n3 Tests 1 Failures 0 Ignored\n")
    ok = lambda s: not re.search(r"\btest_\w+|tests?/", s)  # noqa: E731  (the prompt writer's rule)
    assert prompts._assertion_lines(output, ok) == ["Expected 1 Was 0", "Expected 'a' Was 'b'. Function x"]


def test_a_prompt_never_quotes_the_test_commands_own_code(manifests):
    """tape suites run on node:test through an adapter given inline (`--import 'data:...'`), and
    node echoes that code in its failure output (`test at data:...`, the source line of a frame):
    the harness is not the library, so no line quoting a run of the test command reaches the issue."""
    import dataclasses
    import random

    from verifiers.swe import RunResult

    adapter = ('data:text/javascript,import assert from "node:assert"; const t = { rejects: async (p, e, m) '
               '=> { await assert.rejects(p, e, m); tick(); }, equal: (x, y, m) => assert.strictEqual(x, y, m) };')
    pkg = dataclasses.replace(packages.find("minilib", manifests), test_command=f"node --import '{adapter}' --test")
    output = textwrap.dedent(f'''\
        not ok 3 - fragment keeps its escapes
          AssertionError [ERR_ASSERTION]: fragment does not throw during resolve
          actual: 'x://h/p#a%252Fb'
          expected: 'x://h/p#a%2Fb'
          => {{ await assert.rejects(p, e, m); tick(); }}, equal: (x, y, m) => assert.strictEqual(x, y, m) }};
          test at {adapter}
        ''')
    texts = [prompts.write(pkg, ["test/x.test.js#fragment keeps its escapes"], RunResult(test_output=output),
                           set(), "", Path("/nonexistent"), random.Random(seed)).text for seed in range(6)]
    assert all("actual: 'x://h/p#a%252Fb'" in text for text in texts)
    assert not any("assert.rejects" in text or "data:text" in text for text in texts)


def test_a_vendored_crates_issue_names_the_crate_not_the_source_package(manifests):
    """url is a folder of Debian's cargo source: a user reports a bug in url, not in cargo."""
    import dataclasses
    import random

    from verifiers.swe import RunResult

    minilib = packages.find("minilib", manifests)
    pkg = dataclasses.replace(minilib, source=dataclasses.replace(minilib.source, root="vendor/url"))
    issue = prompts.write(pkg, ["tests/parse.rs#parses"], RunResult(test_output="expected: 3\nactual: 4\n"), set(), "",
                          Path("/nonexistent"), random.Random(0))
    assert "url (vendored in minilib 1.0)" in issue.text and issue.title.startswith("url: ")


def test_a_bare_exception_class_brings_its_message_and_alone_says_nothing():
    """rspec prints `NoMethodError:` and the message on the next line: the excerpt keeps both. An
    excerpt of class names only (pytest's `AssertionError` from a helper's plain assert) quotes
    nothing the agent could go on, so the issue is mute and the candidate is dropped."""
    output = textwrap.dedent('''\
          1) Hashie::Mash#method_missing raises
             Failure/Error: expect { subject.boo }.to raise_error(NoMethodError)
             NoMethodError:
               undefined method `boo' for #<Hashie::Mash>
             TypeError:
        ''')
    lines = prompts._assertion_lines(output, lambda s: True)  # rspec's Failure/Error: echoes test code
    assert lines == ["NoMethodError:", "undefined method `boo' for #<Hashie::Mash>", "TypeError:"]
    assert prompts._says_something(lines)
    assert not prompts._says_something(["AssertionError", "TypeError:"])
    assert not prompts._says_something(["got:", "want:"]) and prompts._says_something(["got: 3", "want:"])
    # pytest's console is read by its failure sections (`_blocks`), never by `_assertion_lines`: the
    # test's code lines it prints around an `E   AssertionError` do not reach a prompt
    failure = prompts._failure(["    def test_x():", ">       assert_equal(expected, result)", "E       AssertionError"])
    assert failure.lines == ("AssertionError",) and not prompts._says_something(list(failure.lines))


def test_no_pinned_packages_mutable_file_has_a_copy_in_its_tree():
    """A bug in a file with a byte copy elsewhere in the tree shows its fix there, and the gate
    rejects every such task (swe-fix-not-visible): blang-semver 4.0.0 ships its module twice (the
    root and v4/, which `./...` never tests), so every fix was visible and every v4/ bug survived;
    go-cmp's test fixtures (cmp/internal/teststructs) hold two identical files. Checked on the
    packages fetched here (`envhub swe sources fetch`)."""
    from collections import defaultdict

    from envhub.config import get_settings
    from verifiers.swe import is_protected

    data_dir = get_settings().data_dir
    checked, copied = 0, []
    for pkg in packages.load_all().values():
        if source.missing(pkg.source, data_dir):
            continue
        checked += 1
        tree = source.tree(pkg.source, data_dir)
        by_digest: dict[str, list[str]] = defaultdict(list)
        for p in tree.rglob("*"):
            if p.is_file() and not p.is_symlink():
                by_digest[hashlib.sha256(p.read_bytes()).hexdigest()].append(p.relative_to(tree).as_posix())
        for same in by_digest.values():
            mutable = [rel for rel in same if is_protected(rel, pkg.source_globs)
                       and not is_protected(rel, pkg.test_globs) and not is_protected(rel, pkg.protected_paths)]
            if len(same) > 1 and mutable:
                copied.append(f"{pkg.id}: {sorted(same)}")
    if not checked:
        pytest.skip("no pinned package is fetched here")
    assert copied == []


def test_the_factory_by_language_sums_its_packages_and_lists_every_language(capsys):
    """`envhub swe sources list --by-language`: the bar is per language, so every one of the 18 has
    a row, the ones nothing is pinned for too; validation seconds are per validated task."""
    from environments.swe.cli import _by_language

    rows = [{"language": "go", "validated": 3, "validation_s": 100.0, "tried": 9, "kept": 3},
            {"language": "go", "validated": 1, "validation_s": 300.0, "tried": 4, "kept": 1},
            {"language": "go", "validated": 0, "validation_s": 0.0, "tried": 5, "kept": 0}]
    _by_language(rows, None, as_json=True)
    out = {r["language"]: r for r in json.loads(capsys.readouterr().out)}
    assert len(out) == 18 and out["erlang"]["pinned"] == 0 and out["erlang"]["validated"] == 0
    assert out["go"] == {"language": "go", "pinned": 3, "with_tasks": 2, "tried": 18, "kept": 4, "validated": 4,
                         "validation_s": 150.0}
