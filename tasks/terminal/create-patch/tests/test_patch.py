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


HEADERS = ("diff ", "--- ", "+++ ", "index ", "new file mode", "deleted file mode", "Only in ", "Binary files ")


@check("patch-well-formed")
def test_well_formed():
    """Every line belongs to a file header or to a hunk, as its counts say: `patch` silently skips
    stray lines (a doubled last line, junk after a hunk), so applying alone does not show them."""
    lines = fs_state.read_text("release.patch").splitlines()
    i, hunks = 0, 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("@@ "):
            head = line.split("@@")[1].split()
            old, new = ((int(x.split(",")[1]) if "," in x else 1) for x in head)
            i += 1
            while old > 0 or new > 0:
                assert i < len(lines), f"hunk {hunks + 1} is cut short"
                body = lines[i]
                if body.startswith("\\"):
                    i += 1
                    continue
                assert body[:1] in (" ", "-", "+"), f"line {i + 1} is not part of hunk {hunks + 1}: {body[:80]!r}"
                old -= body[:1] in (" ", "-")
                new -= body[:1] in (" ", "+")
                i += 1
            hunks += 1
            while i < len(lines) and lines[i].startswith("\\"):
                i += 1
            continue
        assert line.startswith(HEADERS), f"line {i + 1} is neither a header nor in a hunk: {line[:80]!r}"
        i += 1
    assert hunks, "release.patch has no hunks"
