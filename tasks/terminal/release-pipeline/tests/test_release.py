import hashlib
import json
import os
import stat
import tarfile
from pathlib import Path

from verifiers import check, fs_state

EXPECTED = json.loads((Path(__file__).parent / "expected.json").read_text())
TARBALL = "dist/greet-1.3.0.tar.gz"
MEMBERS = {"greet-1.3.0/bin/greet", "greet-1.3.0/README.md", "greet-1.3.0/CHANGELOG.md"}


@check("release-commit")
def test_commit():
    assert fs_state.git("project", "rev-parse", "--abbrev-ref", "HEAD") == "main"
    assert fs_state.git("project", "log", "-1", "--format=%s", "main") == "Release 1.3.0"
    assert fs_state.git("project", "rev-parse", "main~1") == EXPECTED["base"]
    assert sorted(fs_state.git("project", "diff", "--name-only", "main~1", "main").split()) == ["CHANGELOG.md", "VERSION"]
    assert fs_state.git("project", "show", "main:VERSION") == "1.3.0"


@check("changelog")
def test_changelog():
    text = fs_state.git("project", "show", "main:CHANGELOG.md")
    assert text.startswith("# Changelog\n\n## Unreleased\n\n## 1.3.0 - 2024-03-15\n\n- add `--shout`\n"), text[:300]
    assert "## 1.2.0 - 2024-02-01" in text and text.count("## Unreleased") == 1


@check("annotated-tag")
def test_tag():
    assert fs_state.git("project", "cat-file", "-t", "v1.3.0") == "tag", "v1.3.0 is not an annotated tag"
    assert fs_state.git("project", "rev-parse", "v1.3.0^{commit}") == fs_state.git("project", "rev-parse", "main")
    assert fs_state.git("project", "tag", "-l", "--format=%(contents:subject)", "v1.3.0") == "greet 1.3.0"


@check("tarball")
def test_tarball():
    p = fs_state.path(TARBALL)
    assert p.is_file(), f"{TARBALL} is missing"
    with tarfile.open(p, "r:gz") as tar:
        files = {m.name.removeprefix("./"): m for m in tar.getmembers() if m.isfile()}
        assert set(files) == MEMBERS, sorted(files)
        assert files["greet-1.3.0/bin/greet"].mode & stat.S_IXUSR
        changelog = tar.extractfile(files["greet-1.3.0/CHANGELOG.md"]).read().decode()
        assert changelog.strip() == fs_state.git("project", "show", "main:CHANGELOG.md").strip()
        ws = fs_state.scratch_copy()
        binary = ws.parent / "greet"
        binary.write_bytes(tar.extractfile(files["greet-1.3.0/bin/greet"]).read())
    os.chmod(binary, 0o755)
    res = fs_state.run([str(binary), "--version"], cwd=ws)
    assert res.stdout.strip() == "greet 1.3.0", res.stdout + res.stderr


@check("checksums")
def test_sums():
    line = fs_state.read_text("dist/SHA256SUMS").strip()
    digest, name = line.split(None, 1)
    assert name.lstrip("*") == "greet-1.3.0.tar.gz"
    assert digest == hashlib.sha256(fs_state.path(TARBALL).read_bytes()).hexdigest()


@check("tree-clean", kind="collateral")
def test_clean():
    assert fs_state.git("project", "status", "--porcelain") == ""
