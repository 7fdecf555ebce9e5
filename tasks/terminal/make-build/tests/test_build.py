import hashlib

from verifiers import check, fs_state

SOURCES = ["src/main.c", "src/ops.c", "src/parse.c", "include/ops.h"]


@check("left-built")
def test_left_built():
    assert fs_state.path("calc/bin/calc").is_file()
    assert fs_state.mode("calc/bin/calc") & 0o100


@check("clean-rebuild")
def test_clean_rebuild():
    ws = fs_state.scratch_copy()
    res = fs_state.run("make -C calc clean && test ! -e calc/bin && test ! -e calc/build && make -C calc",
                       cwd=ws, timeout=120)
    assert res.returncode == 0, (res.stdout + res.stderr)[-1500:]
    for a, op, b, want in [("6", "x", "7", "42"), ("-15", "/", "4", "-3"), ("1000000", "+", "2345", "1002345"),
                           ("3", "-", "10", "-7")]:
        run = fs_state.run(["calc/bin/calc", a, op, b], cwd=ws)
        assert run.returncode == 0 and run.stdout.strip() == want, (a, op, b, run.stdout, run.stderr)
    bad = fs_state.run(["calc/bin/calc", "1", "/", "0"], cwd=ws)
    assert bad.returncode == 1


@check("sources-unchanged", kind="collateral")
def test_sources():
    digests = {rel: hashlib.sha256(fs_state.path("calc/" + rel).read_bytes()).hexdigest()[:16] for rel in SOURCES}
    assert digests == EXPECTED, digests


EXPECTED = {'src/main.c': '4cc2ba07aba62943', 'src/ops.c': 'c095b21221b5d719', 'src/parse.c': '4513dd8eb9fe98a5', 'include/ops.h': '9fb579f24e54a79a'}
