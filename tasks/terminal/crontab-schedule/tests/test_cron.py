"""Cron lines are compared by meaning: each field is expanded to the set of times it matches."""
import re

from verifiers import check, fs_state

NAMES = {"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10,
         "nov": 11, "dec": 12, "sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}
RANGES = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)]


def expand(field: str, lo: int, hi: int) -> set[int]:
    out: set[int] = set()
    for part in field.lower().split(","):
        m = re.fullmatch(r"(\*|[a-z0-9]+(?:-[a-z0-9]+)?)(?:/(\d+))?", part)
        assert m, f"bad cron field {field!r}"
        base, step = m.group(1), int(m.group(2) or 1)
        if base == "*":
            a, b = lo, hi
        else:
            ends = [int(NAMES.get(x, x)) if not x.isdigit() else int(x) for x in base.split("-")]
            a, b = ends[0], ends[-1] if len(ends) > 1 else (hi if m.group(2) else ends[0])
        out |= set(range(a, b + 1, step))
    return {0 if (hi == 7 and v == 7) else v for v in out}


def jobs() -> dict[str, tuple]:
    found = {}
    for line in fs_state.read_lines("crontab.txt"):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(None, 5)
        assert len(parts) == 6, f"not a 5-field cron line: {line!r}"
        fields = tuple(frozenset(expand(f, *r)) for f, r in zip(parts[:5], RANGES))
        cmd = parts[5]
        script = re.search(r"/workspace/jobs/(\w+)\.sh", cmd)
        assert script, f"no job script in {cmd!r}"
        assert script.group(1) not in found, f"{script.group(1)} scheduled twice"
        found[script.group(1)] = (fields, cmd)
    return found


ALL = [frozenset(range(a, b + 1)) for a, b in RANGES]
ALL[4] = frozenset(range(0, 7))


@check("backup-daily-0230")
def test_backup():
    fields, _ = jobs()["backup"]
    assert fields == (frozenset({30}), frozenset({2}), ALL[2], ALL[3], ALL[4])


@check("cleanup-weekdays-15min")
def test_cleanup():
    fields, _ = jobs()["cleanup"]
    assert fields == (frozenset({0, 15, 30, 45}), ALL[1], ALL[2], ALL[3], frozenset({1, 2, 3, 4, 5}))


@check("report-monthly")
def test_report():
    fields, _ = jobs()["report"]
    assert fields == (frozenset({0}), frozenset({8}), frozenset({1}), ALL[3], ALL[4])


@check("output-logged")
def test_logging():
    for name, (_, cmd) in jobs().items():
        assert re.search(r">>\s*/workspace/logs/cron\.log\s+2>&1\s*$", cmd) or \
            re.search(r"&>>\s*/workspace/logs/cron\.log\s*$", cmd), f"{name}: output not appended to the log: {cmd!r}"
