import random
import statistics

from verifiers import check, fs_state


def expected(vals: list[float]) -> str:
    s = sorted(vals)
    return (f"count={len(s)} min={s[0]:.3f} max={s[-1]:.3f} mean={sum(vals) / len(vals):.3f} "
            f"median={statistics.median(s):.3f}")


@check("left-built")
def test_built():
    assert fs_state.path("stats/stats").is_file()


@check("fresh-inputs")
def test_fresh_inputs():
    ws = fs_state.scratch_copy()
    res = fs_state.run("rm -f stats/stats && make -C stats", cwd=ws, timeout=120)
    assert res.returncode == 0, (res.stdout + res.stderr)[-1000:]
    rnd = random.Random(1234)
    cases = [[1.5, 2.25, 1.75, 3, 10, 2], [5.0], [0.1, 0.4, 0.2, 0.3], [-2.5, -2.25, 7, 3.125, 0.5],
             [rnd.uniform(-5, 5) for _ in range(101)], [rnd.uniform(0, 2) for _ in range(5000)]]
    for vals in cases:
        text = "".join(f"{v!r}\n" for v in vals)
        run = fs_state.run(["stats/stats"], cwd=ws, input=text)
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip() == expected(vals), (vals[:6], run.stdout)
