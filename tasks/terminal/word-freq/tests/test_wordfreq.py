import collections
import re
from pathlib import Path

from verifiers import check, fs_state

DATA = Path(__file__).parent / "data"


def expected(text: str, n: int) -> list[str]:
    counts = collections.Counter(w.lower() for w in re.findall(r"[A-Za-z]+", text))
    return [f"{c} {w}" for w, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]


def run(text: str, n: int) -> list[str]:
    ws = fs_state.scratch_copy()
    assert (ws / "wordfreq.sh").is_file(), "wordfreq.sh is missing"
    res = fs_state.run(["bash", "wordfreq.sh", str(n)], cwd=ws, input=text)
    assert res.returncode == 0, res.stderr[-500:]
    return [" ".join(ln.split()) for ln in res.stdout.splitlines() if ln.strip()]


@check("sample")
def test_sample():
    assert run(fs_state.read_text("sample.txt"), 3) == ["4 the", "3 quick", "2 dog"]


@check("fresh-text")
def test_fresh():
    text = (DATA / "fresh.txt").read_text()
    assert run(text, 7) == expected(text, 7)
    assert run("Zeta zeta ALPHA beta\n", 10) == ["2 zeta", "1 alpha", "1 beta"]
