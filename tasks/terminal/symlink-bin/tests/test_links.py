import os

from verifiers import check, fs_state

WANT = {"fmt": "tools/fmt/fmt", "lint": "tools/lint/lint", "lint-fix": "tools/lint/lint-fix",
        "deploy.sh": "tools/deploy/deploy.sh"}


@check("links-exist")
def test_links():
    assert fs_state.listing("bin") == sorted(WANT)
    for name, target in WANT.items():
        p = fs_state.path("bin/" + name)
        assert p.is_symlink(), f"bin/{name} is not a symlink"
        assert os.path.normpath(os.path.join("bin", os.readlink(p))) == target, (name, os.readlink(p))


@check("links-relative")
def test_relative():
    for name in WANT:
        assert not os.readlink(fs_state.path("bin/" + name)).startswith("/"), name


@check("links-run")
def test_run():
    ws = fs_state.scratch_copy()
    moved = ws.parent / "moved"
    ws.rename(moved)
    res = fs_state.run(["bin/lint-fix"], cwd=moved)
    assert res.returncode == 0 and res.stdout.strip() == "lint-fix", res.stderr
