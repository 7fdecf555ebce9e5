"""A package's shared dependency build (`environments/swe/factory/shared_builds.py`): made once at
install from the clean tree, it keeps the dependencies' artifacts and nothing of the package, so a
task's build compiles the agent's code whatever its files' mtimes say."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
import yaml

from environments.swe.factory import fetch, packages, shared_builds
from tests.swe.conftest import require_toolchain

CARGO = ("/usr/bin/cargo --config 'source.crates-io.replace-with=\"debian\"' "
         "--config 'source.debian.directory=\"/usr/share/cargo/registry\"'")
FILES = {
    "Cargo.toml": '[package]\nname = "minicrate"\nversion = "1.0.0"\nedition = "2018"\n\n'
                  '[dependencies]\nhelper = { path = "vendor/helper" }\n',
    "src/lib.rs": "pub fn add(a: i64, b: i64) -> i64 { helper::id(a) + b }\n",
    "tests/add.rs": "#[test]\nfn adds() { assert_eq!(minicrate::add(2, 3), 5); }\n",
    "vendor/helper/Cargo.toml": '[package]\nname = "helper"\nversion = "0.1.0"\nedition = "2018"\n',
    "vendor/helper/src/lib.rs": "pub fn id(x: i64) -> i64 { x }\n",
}


@pytest.fixture
def crate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> packages.Package:
    """minicrate 1.0 pinned (a local file: URL stands in for the registry's), its shared build
    kept under the test's own folder; `vendor/helper` is a dependency outside the package's crates."""
    require_toolchain("rust")
    tarball = tmp_path / "minicrate-1.0.tar.gz"
    with tarfile.open(tarball, "w:gz") as tar:
        for name, text in FILES.items():
            info = tarfile.TarInfo(f"minicrate-1.0/{name}")
            info.size, info.mode = len(text.encode()), 0o644
            tar.addfile(info, io.BytesIO(text.encode()))
    entry = {"id": "pypi/minicrate-1.0", "registry": "pypi", "name": "minicrate", "version": "1.0",
             "language": "rust", "unpack": "archive",
             "files": [{"name": tarball.name, "sha256": hashlib.sha256(tarball.read_bytes()).hexdigest(),
                        "url": tarball.as_uri()}],
             "build": f"{CARGO} build --offline --tests -q", "prebuilt": "$TMPDIR/target",
             "test_command": f"{CARGO} test --offline -q --tests",
             "report": {"format": "libtest_json", "file": "libtest.jsonl"},
             "env": {"CARGO_HOME": "$TMPDIR/cargo-home", "CARGO_TARGET_DIR": "$TMPDIR/target",
                     "CARGO_INCREMENTAL": "0", "RUSTC": "/usr/bin/rustc"},
             "protected_paths": ["tests/**", "Cargo.toml"], "source_globs": ["src/**/*.rs"], "test_globs": ["tests/**"]}
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "pypi.yaml").write_text(yaml.safe_dump([entry]))
    packages.load_all.cache_clear()
    monkeypatch.setattr(shared_builds, "ROOT", tmp_path / "prebuilt")
    pkg = packages.find("minicrate", tmp_path / "manifests")
    fetch.fetch(pkg, tmp_path / "data", apt=False)
    yield pkg
    packages.load_all.cache_clear()


def _run(pkg: packages.Package, checkout: Path, tmp: Path, command: str) -> subprocess.CompletedProcess:
    tmp.mkdir(exist_ok=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp), "TMPDIR": str(tmp)}
    env |= {k: v.replace("$TMPDIR", str(tmp)) for k, v in pkg.env.items()}
    return subprocess.run(["/bin/bash", "-c", command], cwd=checkout, env=env, capture_output=True, text=True,
                          timeout=600)


def _backdated_bug(tree: Path, dest: Path) -> Path:
    """A checkout whose fix-worthy edit carries an mtime from before any build."""
    shutil.copytree(tree, dest)
    lib = dest / "src" / "lib.rs"
    lib.write_text(FILES["src/lib.rs"].replace("+ b", "- b"))
    os.utime(lib, (946684800, 946684800))  # 2000-01-01
    return dest


def test_the_shared_build_keeps_the_dependencies_and_nothing_of_the_package(crate, tmp_path):
    assert fetch.fetch(crate, tmp_path / "data", shared_build=False).built is False  # a package without tasks
    assert not shared_builds.present(crate)
    assert fetch.fetch(crate, tmp_path / "data").built is True and shared_builds.present(crate)
    assert shared_builds.build(crate, tmp_path / "data") is False  # made once
    names = [p.name for p in (shared_builds.folder(crate) / "target").rglob("*")]
    assert any(n.startswith("libhelper-") and n.endswith(".rlib") for n in names)
    assert not [n for n in names if n.startswith(("minicrate", "libminicrate", "add-", "add."))]
    assert str(shared_builds.folder(crate)) in crate.metadata()["build"]


def test_a_backdated_edit_is_compiled_from_the_shared_build(crate, tmp_path):
    """An agent that sets its edited file's mtime before the clean build's must still have its code
    built: the control (the clean tree's whole target folder copied into place) shows that cargo
    would otherwise call the package fresh and run the clean code."""
    from environments.swe import source

    tree = source.tree(crate.source, tmp_path / "data")
    # the control
    assert _run(crate, tree, tmp_path / "t0", crate.build).returncode == 0
    (tmp_path / "t1").mkdir()
    shutil.copytree(tmp_path / "t0" / "target", tmp_path / "t1" / "target", symlinks=True)
    control = _run(crate, _backdated_bug(tree, tmp_path / "c1"), tmp_path / "t1",
                   f"{crate.build} && {crate.test_command}")
    assert control.returncode == 0, control.stderr[-2000:]
    # the shared build: the same edit is compiled, and the test that checks it fails
    shared_builds.build(crate, tmp_path / "data")
    run = _run(crate, _backdated_bug(tree, tmp_path / "c2"), tmp_path / "t2",
               f"{crate.metadata()['build']} && {crate.test_command}")
    assert run.returncode != 0 and "assertion" in run.stdout + run.stderr
    assert (tmp_path / "t2" / "target").is_dir() and not (tmp_path / "t2" / "target.part").exists()


def test_a_missing_shared_build_leaves_the_build_cold(crate, tmp_path):
    from environments.swe import source

    assert not shared_builds.folder(crate).exists()  # fetched without `apt`: nothing built
    tree = source.tree(crate.source, tmp_path / "data")
    checkout = tmp_path / "c"
    shutil.copytree(tree, checkout)
    run = _run(crate, checkout, tmp_path / "t", f"{crate.metadata()['build']} && {crate.test_command}")
    assert run.returncode == 0, run.stderr[-2000:]


def test_prebuilt_is_refused_where_the_factory_cannot_strip_the_package(tmp_path):
    entry = {"id": "pypi/x-1", "registry": "pypi", "name": "x", "version": "1", "language": "python",
             "files": [{"name": "x.tgz", "sha256": "0" * 64}], "build": "true", "prebuilt": "$TMPDIR/t",
             "test_command": "true", "report": {"format": "junit_xml", "file": "j.xml"},
             "source_globs": ["*.py"], "test_globs": ["tests/**"]}
    (tmp_path / "pypi.yaml").write_text(yaml.safe_dump([entry]))
    packages.load_all.cache_clear()
    with pytest.raises(packages.PackageError, match="prebuilt needs"):
        packages.load_all(tmp_path)
    packages.load_all.cache_clear()
