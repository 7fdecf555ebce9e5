import json
import shutil
from pathlib import Path

from verifiers import check, fs_state

NEW_TREE = json.loads((Path(__file__).parent / "new_tree.json").read_text())


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
    got = {k: v.decode(errors="replace") for k, v in tree(target).items()}
    assert got == NEW_TREE, sorted(set(got) ^ set(NEW_TREE))


@check("trees-kept", kind="collateral")
def test_kept():
    assert {k: v.decode() for k, v in tree(fs_state.path("new")).items()} == NEW_TREE
    assert fs_state.read_text("old/src/version.py") == 'VERSION = "1.0"\n'
    assert fs_state.exists("old/src/legacy.txt")
