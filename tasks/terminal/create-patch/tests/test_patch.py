import filecmp
import shutil
from pathlib import Path

from verifiers import check, fs_state

NEW = Path(__file__).parent / "new_tree"


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@check("patch-applies")
def test_applies():
    ws = fs_state.scratch_copy()
    assert (ws / "release.patch").is_file(), "release.patch is missing"
    target = ws.parent / "target"
    shutil.copytree(ws / "old", target)
    res = fs_state.run(["patch", "-p1", "--batch", "--forward", "-i", str(ws / "release.patch")], cwd=target)
    assert res.returncode == 0, (res.stdout + res.stderr)[-1000:]
    for stray in list(target.rglob("*.orig")) + list(target.rglob("*.rej")):
        stray.unlink()
    for d in sorted((p for p in target.rglob("*") if p.is_dir()), reverse=True):
        if not any(d.iterdir()):
            d.rmdir()
    assert tree(target) == tree(NEW), sorted(set(tree(target)) ^ set(tree(NEW)))


@check("trees-kept", kind="collateral")
def test_kept():
    assert tree(fs_state.path("new")) == tree(NEW)
    assert fs_state.read_text("old/src/version.py") == 'VERSION = "1.0"\n'
    assert fs_state.exists("old/src/legacy.txt")
