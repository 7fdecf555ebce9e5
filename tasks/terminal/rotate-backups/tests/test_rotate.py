import tempfile
from pathlib import Path

from verifiers import check, fs_state


def run_on(names: list[str], keep: int, subdir: list[str] = ()) -> set[str]:
    ws = fs_state.scratch_copy()
    assert (ws / "rotate.sh").is_file(), "rotate.sh is missing"
    d = Path(tempfile.mkdtemp(prefix="rot-")) / "my backups"
    (d / "old").mkdir(parents=True)
    for n in names:
        (d / n).write_text(n)
    for n in subdir:
        (d / "old" / n).write_text(n)
    res = fs_state.run(["bash", "rotate.sh", str(d), str(keep)], cwd=ws)
    assert res.returncode == 0, res.stderr[-500:]
    assert sorted(p.name for p in (d / "old").iterdir()) == sorted(subdir), "touched a subdirectory"
    return {p.name for p in d.iterdir() if p.is_file()}


@check("ran-on-backups")
def test_ran():
    assert fs_state.listing("backups") == ["README.txt", "backup-20240201.tar.gz", "backup-20240214.tar.gz",
                                           "backup-20240301.tar.gz", "backup-manual.tar.gz"]


@check("fresh-dirs")
def test_fresh():
    names = [f"backup-2023{m:02d}{d:02d}.tar.gz" for m, d in [(12, 1), (1, 31), (7, 4), (11, 30), (2, 2)]]
    others = ["backup-2023.tar.gz", "backup-20230101.tar.gz.part", "notes.md", "xbackup-20991231.tar.gz"]
    assert run_on(names + others, 2, subdir=["backup-20000101.tar.gz"]) == set(others) | {
        "backup-20231201.tar.gz", "backup-20231130.tar.gz"}
    assert run_on(names, 10) == set(names)
    assert run_on(names + ["backup-20250101.tar.gz"], 1) == {"backup-20250101.tar.gz"}
