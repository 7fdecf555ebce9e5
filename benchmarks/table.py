"""`make bench`: run the benchmarks and rewrite the figures table in benchmarks/README.md.

    .venv/bin/python benchmarks/table.py [--full] [--no-write]

Quick by default (`protocol.py --quick`, about 80 s on 2 cores; `verify.py --n 5`; `episodes.py
--quick`: terminal and db at 1 and 8 clients, office at 1, 3 s each); `--full` runs the issue's sizes
(8 s loads, 1,000 live terminal and 5,000 live db sessions, 20 verifies per family, `episodes.py`'s
20 s loads at every level, SWE included).
Each figure is printed with its target; the table carries the date, the machine and its load
average, because on a shared machine the absolute numbers move and only same-run ratios compare.
`verify.py` rows are filled when that script is present, else marked "not run". The pairs/s and CPU
ratios are medians of same-round ratios (the servers take turns under load), not ratios of medians.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import protocol  # beside this script

HERE = Path(__file__).resolve().parent
README = HERE / "README.md"
START, END = "<!-- bench:start (written by benchmarks/table.py) -->", "<!-- bench:end -->"


def run_json(args: list[str]) -> dict | None:
    """The JSON a benchmark prints (its last line, or all of stdout); None if it failed."""
    proc = subprocess.run([sys.executable, *args], cwd=HERE.parent, capture_output=True, text=True)
    if proc.returncode != 0:
        print(f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}", file=sys.stderr)
        return None
    try:
        return json.loads(proc.stdout)
    except ValueError:
        return json.loads(proc.stdout.strip().splitlines()[-1])


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor() or "unknown CPU")
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} × {cpu}, {mem_gib:.0f} GiB, Python {platform.python_version()}"


def fmt(v: float | None, digits: int = 0) -> str:
    return "–" if v is None else f"{v:,.{digits}f}"


def ratio(a: float | None, b: float | None) -> str:
    return "–" if not a or not b else f"{a / b:.2f}×"


def episode_rows(e: dict | None) -> list[tuple[str, str, str, str, str]]:
    """`episodes.py`'s figures: per family and client count, episodes/s with the failures, the
    episode's p50 / p99, the server's CPU per episode (and its cgroup's), and at 1 client that CPU
    by phase."""
    if e is None:
        return [("episodes/s per family", "not run (benchmarks/episodes.py failed)", "", "", "")]
    out: list[tuple[str, str, str, str, str]] = []
    for fam, r in e["families"].items():
        if "not_run" in r:
            out.append((f"{fam} episodes/s", f"not run: {r['not_run'][:120]}", "", "", ""))
            continue
        for c, level in r["levels"].items():
            x, load = level["new"], f"{c} client{'s' if c != '1' else ''}"
            cpu = x["server_cpu_ms"]
            out += [(f"{fam} episodes/s, {load} (failures)", f"{fmt(x['episodes_per_s'], 1)} ({x['failures']})",
                     "", "", "0 failures"),
                    (f"{fam} episode ms p50 / p99, {load}", f"{fmt(x['p50_ms'])} / {fmt(x['p99_ms'])}", "", "", ""),
                    (f"{fam} server CPU ms per episode, {load} (its cgroup's)",
                     f"{fmt(cpu['total'], 1)} ({fmt(cpu['cgroup'], 1)})", "", "", "")]
            if (ph := x.get("phases_cpu_ms")) is not None:
                out.append((f"{fam} server CPU ms by phase, 1 client: reset / steps / verify / close",
                            " / ".join(fmt(ph[k], 1) for k in ("reset", "steps", "verify", "close")), "", "", ""))
    return out


def rows(p: dict | None, v: dict | None, e: dict | None = None) -> list[tuple[str, str, str, str, str]]:
    """(figure, envhub, OpenEnv 0.10.0, ratio, target)."""
    out: list[tuple[str, str, str, str, str]] = []
    if p is not None:
        e, o = p["envhub"], p["openenv"]
        loads = [(load, sessions) for load, sessions, _ in protocol.LOADS if load in e]
        no_poll = p.get(protocol.NO_POLL, {})
        for load, _ in loads:
            q = no_poll.get(load)  # 1-session loads: envhub polls, and its CPU per pair is about its time per pair
            for key, figure, target in (("pairs_per_s", f"echo reset+step pairs/s, {load} (store on)", "≥ 2× OpenEnv"),
                                        ("cpu_us_per_pair", f"server CPU µs per pair, {load}",
                                         "≤ 0.5× OpenEnv" if q is None else "– (polls: its core stays busy)")):
                a, b = e[load][key], o[load][key]
                same_round = e[load].get(f"ratio_{key}")  # the median of same-round ratios (protocol.interleaved)
                out.append((figure, fmt(a), fmt(b), f"{same_round:.2f}×" if same_round else ratio(a, b), target))
            if q is not None:
                for key, figure, target in (("pairs_per_s", f"echo pairs/s, {load}, polling off", ""),
                                            ("cpu_us_per_pair", f"server CPU µs per pair, {load}, polling off",
                                             "≤ 0.5× OpenEnv")):
                    out.append((figure, fmt(q[key]), fmt(o[load][key]), f"{q[f'ratio_{key}']:.2f}×", target))
            if (c := p.get("ceiling", {}).get(load)) is not None:  # protocol.PICOWS_APP
                out.append((f"ceiling: a server that only answers, pairs/s, {load}", fmt(c["pairs_per_s"]),
                            fmt(o[load]["pairs_per_s"]), f"{c['ratio_pairs_per_s']:.2f}×",
                            "the most any server can show here"))
        for load in (load for load, sessions in loads if sessions > 1):
            a, b = e[load]["p99_ms"], o[load]["p99_ms"]
            out.append((f"p99 ms of a pair, {load}", fmt(a, 1), fmt(b, 1), ratio(a, b), "≤ OpenEnv"))
        a, b = e["idle_kib_per_session"], o["idle_kib_per_session"]
        out.append(("idle memory KiB/session (RSS, a WS connection each)", fmt(a, 1), fmt(b, 1), ratio(a, b),
                    "≤ 0.1× OpenEnv, ≤ 8 KiB"))
        t, d = p["terminal"], p["db"]
        out += [("terminal reset p50 ms", fmt(t["reset_p50_ms"], 1), "", "", "keep (23 ms)"),
                ("terminal step p50 ms", fmt(t["step_p50_ms"], 1), "", "", "keep (1.4 ms)"),
                ("live terminal sessions held (probes ok / 20)", f"{t['live_sessions']} ({t['live_probe_ok']})",
                 "", "", "1,000"),
                ("terminal: server RSS MB after", fmt(t["server_rss_mb_after"]), "", "", ""),
                ("live db sessions held (probes ok / 20)", f"{d['live_sessions']} ({d['live_probe_ok']})",
                 "", "", "5,000"),
                ("db: server RSS MB with them live", fmt(d["server_rss_mb_live"]), "", "", ""),
                ("db: KiB per live session", fmt(d["kib_per_live_session"], 1), "", "", ""),
                ("db: reset p50 ms while filling", fmt(d["create_p50_ms"], 1), "", "", "")]
    targets = {"terminal": "≤ 60 ms", "db": "≤ 60 ms", "office": "≤ 400 ms"}
    for fam, target in targets.items():
        try:
            warm, cold = v[fam]["warm"]["verify"]["p50"], v[fam]["cold"]["verify"]["p50"]  # type: ignore[index]
            out.append((f"verify p50 ms {fam} (warm; cold)", f"{warm} ({cold})", "", "", target))
        except (TypeError, KeyError):
            out.append((f"verify p50 ms {fam}", "not run (benchmarks/verify.py absent or failed)", "", "", target))
    out.append(("SWE verify time split per language", "benchmarks/swe_verify.py (not run by make bench)", "", "", ""))
    return out + episode_rows(e)


def table(p: dict | None, v: dict | None, full: bool, e: dict | None = None) -> str:
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    head = (f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {'full' if full else 'quick'} run, {machine()}, "
            f"load average after the run {load}. Servers on CPU 0, load generator on CPU 1 (the episode rows: "
            f"not pinned).\n\n")
    lines = ["| figure | envhub | OpenEnv 0.10.0 | ratio | target |", "|---|---|---|---|---|"]
    lines += [f"| {' | '.join(r)} |" for r in rows(p, v, e)]
    return head + "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="the issue's sizes (minutes)")
    ap.add_argument("--no-write", action="store_true", help="print the table, leave README.md as it is")
    args = ap.parse_args()
    p = run_json(["benchmarks/protocol.py", "--json", *([] if args.full else ["--quick"])])
    v = None
    if (HERE / "verify.py").exists():
        v = run_json(["benchmarks/verify.py", "--json", "--n", "20" if args.full else "5"])
    e = run_json(["benchmarks/episodes.py", "--json", *([] if args.full else ["--quick"])])
    text = table(p, v, args.full, e)
    print(text)
    if not args.no_write:
        readme = README.read_text()
        before, _, rest = readme.partition(START)
        _, _, after = rest.partition(END)
        README.write_text(f"{before}{START}\n{text}{END}{after}")
        print(f"written to {README.relative_to(HERE.parent)}")


if __name__ == "__main__":
    main()
