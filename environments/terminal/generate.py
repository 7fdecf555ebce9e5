"""The drawn terminal task set: one task per seed, drawn from templates of real shell work.

`materialize(set_id, seed, root)` writes the task folder of one seed of a set
(`tasks/terminal/drawn/taskset.yaml`) as `root/<seed>`: the same bytes on every machine (every
random source is seeded from the set id and the seed, files are written with explicit modes,
nothing reads the clock or the host), so a set is data and its folders are a cache.

A seed's template is `ORDER[seed % len(TEMPLATES)]` (a seeded shuffle of the templates), so every
template gets a fair share of any seed range. Everything else is drawn per seed: file names,
sizes and contents, which column, field, level, threshold or window is asked about, and the
wording. The expected output is computed here, independently of the oracle (`solution/solve.sh`),
and stored in `tests/expected.json` (`answer`: the exact text that is right); the verifier judges
the whole output strictly (every line, in order) and checks that the inputs were left as given.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import random
import struct
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

FILE_MODE = 0o644
DIR_MODE = 0o755

WORDS = ("alpha bravo cobalt delta ember falcon garnet harbor indigo juniper kestrel lumen maple "
         "nectar onyx pepper quartz raven saffron tundra umber velvet willow xenon yarrow zephyr "
         "amber birch cedar dune fern glacier hazel iris jade kelp lotus moss nova orchid pine "
         "quill reed sage thistle ursa vale wren").split()


# --- the task being written ------------------------------------------------------------------------

@dataclass
class Draft:
    """One task: what the template drew, before it is written out."""

    template: str
    title: str
    difficulty: str
    tags: list[str]
    prompt: str
    solve: str
    tests: str  # the body of tests/test_task.py after the shared header
    expected: dict[str, Any]  # must hold `answer`: the exact right text
    files: dict[str, bytes | str] = field(default_factory=dict)  # state/ files
    modes: dict[str, int] = field(default_factory=dict)  # state/ paths (files or dirs) with a mode of their own
    proxies: dict[str, int] = field(default_factory=dict)
    limits: dict[str, int] = field(default_factory=lambda: {"step_timeout_s": 30, "verify_timeout_s": 60,
                                                             "max_steps": 40})


TEST_HEADER = '''\
import json
from pathlib import Path

from verifiers import check, fs_state

EXPECTED = json.loads((Path(__file__).parent / "expected.json").read_text())


def lines_of(rel):
    """The file's lines, trailing blanks of each line and blank lines at the end left out."""
    lines = [ln.rstrip() for ln in fs_state.read_text(rel).splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def first_difference(got, want):
    for i, (a, b) in enumerate(zip(got, want)):
        if a != b:
            return f"line {i + 1}: {a[:120]!r}, expected another value"
    return f"{len(got)} lines, expected {len(want)}"


@check("inputs-untouched", kind="collateral")
def test_inputs_untouched():
    changed = [rel for rel, digest in EXPECTED["inputs"].items()
               if not fs_state.exists(rel) or fs_state.sha256(rel) != digest]
    assert not changed, f"inputs changed or removed: {changed}"
'''

ANSWER_TEST = '''

@check("answer-correct")
def test_answer():
    got = lines_of(EXPECTED["output"])
    want = EXPECTED["answer"].splitlines()
    assert got == want, first_difference(got, want)
'''


def _sha(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def _yaml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def write(root: Path, set_id: str, seed: int, d: Draft) -> Path:
    folder = root / str(seed)
    for sub in ("state", "tests", "solution"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    for rel, data in sorted(d.files.items()):
        p = folder / "state" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data.encode() if isinstance(data, str) else data)
    state = folder / "state"
    for p in sorted(state.rglob("*"), reverse=True):  # children before their folder
        rel = p.relative_to(state).as_posix()
        p.chmod(d.modes.get(rel, DIR_MODE if p.is_dir() else FILE_MODE))
    proxies = ", ".join(f"{k}: {v}" for k, v in sorted(d.proxies.items()))
    limits = ", ".join(f"{k}: {v}" for k, v in d.limits.items())
    (folder / "task.yaml").write_text(
        f"id: {set_id}/{seed}\nfamily: terminal\ntitle: {_yaml_str(d.title)}\ndifficulty: {d.difficulty}\n"
        f"tags: [{', '.join(d.tags)}]\nlimits: {{{limits}}}\n"
        f"metadata:\n  template: {d.template}\n  seed: {seed}\n  proxies: {{{proxies}}}\n")
    (folder / "prompt.md").write_text(d.prompt.strip() + "\n")
    (folder / "solution" / "solve.sh").write_text(d.solve.strip() + "\n")
    (folder / "tests" / "test_task.py").write_text(TEST_HEADER + d.tests)
    (folder / "tests" / "expected.json").write_text(json.dumps(d.expected, indent=1, sort_keys=True) + "\n")
    for p in sorted(folder.rglob("*")):
        if not p.relative_to(folder).parts[0] == "state":
            p.chmod(DIR_MODE if p.is_dir() else FILE_MODE)
    folder.chmod(DIR_MODE)
    return folder


def inputs_of(d: Draft, skip: tuple[str, ...] = ()) -> dict[str, str]:
    return {rel: _sha(data) for rel, data in sorted(d.files.items()) if rel not in skip}


def pick(r: random.Random, *options: str) -> str:
    return r.choice(options)


def name(r: random.Random, k: int = 1, sep: str = "-") -> str:
    return sep.join(r.sample(WORDS, k))


# --- templates ---------------------------------------------------------------------------------

LEVELS = ["DEBUG", "INFO", "WARN", "ERROR"]
SERVICES = ["auth", "api", "billing", "worker", "cache", "db", "mailer", "search", "gateway", "scheduler",
            "ingest", "notify", "render", "export"]
MESSAGES = ["request handled", "retrying upstream call", "connection reset by peer", "slow query detected",
            "cache miss", "token refreshed", "job finished", "queue depth high", "timeout waiting for lock",
            "config reloaded", "disk usage above threshold", "payload rejected"]


def log_levels(r: random.Random) -> Draft:
    services = sorted(r.sample(SERVICES, r.randint(4, 7)))
    weights = [r.randint(1, 9) for _ in services]
    lw = [r.randint(3, 9), r.randint(8, 20), r.randint(2, 8), r.randint(2, 8)]
    n = r.randint(300, 800)
    day = f"2024-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}"
    t = r.randint(0, 6 * 3600)
    style = r.randint(0, 1)
    log = pick(r, "app.log", "service.log", "combined.log", "server.log", "events.log")
    out = pick(r, "counts.txt", "level_report.txt", "by_service.txt", "summary.txt", "tally.txt")
    rows = []
    for _ in range(n):
        t += r.randint(1, 90)
        if t >= 86400:
            break
        svc = r.choices(services, weights)[0]
        lvl = r.choices(LEVELS, lw)[0]
        rows.append((t, svc, lvl, r.choice(MESSAGES)))
    level = r.choice(["WARN", "ERROR"])
    i = r.randint(0, len(rows) // 3)
    j = r.randint(i + len(rows) // 4, len(rows) - 1)
    lo = rows[i][0] // 60 * 60
    hi = min(rows[j][0] // 60 * 60 + 60, 86340)
    def hm(s: int) -> str:
        return f"{s // 3600:02d}:{s % 3600 // 60:02d}"

    def stamp(s: int) -> str:
        return f"{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"

    lines = []
    for s, svc, lvl, msg in rows:
        if style == 0:
            lines.append(f"{day}T{stamp(s)}Z {lvl:<5} [{svc}] {msg}")
        else:
            lines.append(f'{day} {stamp(s)} level={lvl.lower()} service={svc} msg="{msg}"')
    counts = Counter(svc for s, svc, lvl, _ in rows if lvl == level and lo <= s < hi)
    answer = [f"{svc} {c}" for svc, c in sorted(counts.items(), key=lambda x: (-x[1], x[0]))]
    fmt = (f"`{day}THH:MM:SSZ LEVEL [service] message`" if style == 0
           else f"`{day} HH:MM:SS level=<level> service=<service> msg=\"...\"` (the level in lower case)")
    ask = pick(r, f"Count, per service, the {level} lines",
               f"For every service, count how many lines have level {level}",
               f"Tally the {level} entries by service")
    prompt = f"""\
`{log}` is a log of one day; each line looks like {fmt}.

{ask} whose timestamp is at or after `{hm(lo)}` and strictly before `{hm(hi)}` on {day}.
Write `{out}` with one line per service that has at least one such line, in the form `SERVICE COUNT`
(one space between), the largest count first; break ties by service name in ascending order.
Nothing else in the file, and leave `{log}` as it is.
"""
    if style == 0:
        sel = (f'$2 == "{level}" && substr($1, 12, 5) >= "{hm(lo)}" && substr($1, 12, 5) < "{hm(hi)}" '
               '{ print substr($3, 2, length($3) - 2) }')
    else:
        sel = (f'$3 == "level={level.lower()}" && substr($2, 1, 5) >= "{hm(lo)}" && substr($2, 1, 5) < "{hm(hi)}" '
               f'{{ sub(/^service=/, "", $4); print $4 }}')
    solve = f"""\
cd /workspace
awk '{sel}' {log} | LC_ALL=C sort | uniq -c | awk '{{print $2, $1}}' | LC_ALL=C sort -k2,2nr -k1,1 > {out}
"""
    d = Draft("log-level-count", f"Count {level} log lines per service in a time window", "easy",
              ["text", "logs", "awk", "sort"], prompt, solve, ANSWER_TEST, {}, {log: "\n".join(lines) + "\n"})
    d.expected = {"output": out, "answer": "\n".join(answer), "inputs": inputs_of(d)}
    d.proxies = {"input_lines": len(lines), "files": 1, "oracle_steps": 5, "answer_lines": len(answer)}
    return d


PATHS = ["/", "/login", "/logout", "/api/v1/items", "/api/v1/orders", "/api/v1/users", "/static/app.js",
         "/static/site.css", "/search", "/cart", "/checkout", "/health", "/admin", "/feed.xml", "/robots.txt",
         "/api/v2/items", "/img/logo.png", "/docs", "/pricing", "/signup"]
STATUSES = [200, 200, 200, 201, 204, 301, 302, 304, 400, 401, 403, 404, 404, 429, 500, 502, 503]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def access_top(r: random.Random) -> Draft:
    ips = sorted({f"{r.choice([10, 172, 192, 203, 198])}.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}"
                  for _ in range(r.randint(12, 40))})
    ipw = [r.randint(1, 30) for _ in ips]
    paths = sorted(r.sample(PATHS, r.randint(8, 16)))
    pw = [r.randint(1, 20) for _ in paths]
    n = r.randint(400, 1100)
    log = pick(r, "access.log", "nginx_access.log", "web.log", "frontend-access.log")
    out = pick(r, "top.txt", "report.txt", "busiest.txt", "top_clients.txt", "ranking.txt")
    day, mon, year = r.randint(1, 28), r.choice(MONTHS), r.choice([2023, 2024, 2025])
    recs = []
    t = r.randint(0, 3600)
    for _ in range(n):
        t += r.randint(0, 40)
        ip, p = r.choices(ips, ipw)[0], r.choices(paths, pw)[0]
        method = r.choices(["GET", "POST", "PUT", "DELETE"], [20, 6, 2, 1])[0]
        status = r.choice(STATUSES)
        recs.append((ip, method, p, status, r.randint(0, 50000), t))
    key = r.choice(["ip", "path"])
    kind = r.choice(["class", "method"])
    if kind == "class":
        cls = r.choice(["2", "4", "5"])
        keep = [x for x in recs if str(x[3])[0] == cls]
        cond = f"whose status code is {cls}xx"
        awkc = f'substr($9, 1, 1) == "{cls}"'
    else:
        m = r.choice(["GET", "POST"])
        keep = [x for x in recs if x[1] == m]
        cond = f"made with the {m} method"
        awkc = f'$6 == "\\"{m}"'
    k = r.randint(3, 8)
    counts = Counter(x[0] if key == "ip" else x[2] for x in keep)
    top = sorted(counts.items(), key=lambda c: (-c[1], c[0]))[:k]
    answer = [f"{c} {v}" for v, c in top]
    ua = ["Mozilla/5.0 (X11; Linux x86_64)", "curl/8.4.0", "Go-http-client/1.1", "python-requests/2.31"]
    lines = [f'{ip} - - [{day:02d}/{mon}/{year}:{tt // 3600 % 24:02d}:{tt % 3600 // 60:02d}:{tt % 60:02d} +0000] '
             f'"{meth} {p} HTTP/1.1" {st} {size} "-" "{r.choice(ua)}"' for ip, meth, p, st, size, tt in recs]
    what = "client IPs (the first field)" if key == "ip" else "request paths (the path of the request line)"
    prompt = f"""\
`{log}` is a web server access log in the combined log format.

{pick(r, "Find", "Report", "List")} the {k} {what} with the most requests {cond}. Write them to `{out}`, one per
line as `COUNT VALUE` (a single space between), most requests first; break ties by the value in plain
ascending byte order. Nothing else in the file; leave the log as it is.
"""
    field_ = "$1" if key == "ip" else "$7"
    solve = f"""\
cd /workspace
awk '{awkc} {{print {field_}}}' {log} | LC_ALL=C sort | uniq -c | awk '{{print $1, $2}}' |
  LC_ALL=C sort -k1,1nr -k2,2 | head -n {k} > {out}
"""
    d = Draft("access-top", f"Top {k} {'clients' if key == 'ip' else 'paths'} of an access log", "easy",
              ["text", "logs", "sort", "uniq"], prompt, solve, ANSWER_TEST, {}, {log: "\n".join(lines) + "\n"})
    d.expected = {"output": out, "answer": "\n".join(answer), "inputs": inputs_of(d)}
    d.proxies = {"input_lines": len(lines), "files": 1, "oracle_steps": 6, "answer_lines": len(answer)}
    return d


CSV_DOMAINS = [
    ("sales.csv", ["region", "product"], ["units", "revenue"],
     [["north", "south", "east", "west", "central", "coast", "valley"],
      ["widget", "gadget", "gizmo", "sprocket", "bracket", "flange", "valve", "rotor"]]),
    ("expenses.csv", ["department", "category"], ["headcount", "amount"],
     [["ops", "sales", "legal", "support", "research", "finance", "hr"],
      ["travel", "software", "hardware", "training", "catering", "rent", "consulting"]]),
    ("shipments.csv", ["warehouse", "carrier"], ["parcels", "cost"],
     [["ams", "ber", "lis", "mad", "osl", "prg", "vie", "waw"],
      ["dhl", "ups", "fedex", "gls", "dpd", "postnl"]]),
    ("tickets.csv", ["team", "priority"], ["reopened", "hours"],
     [["platform", "mobile", "web", "data", "infra", "payments"], ["p1", "p2", "p3", "p4"]]),
]


def csv_group(r: random.Random) -> Draft:
    fname, cats, nums, pools = r.choice(CSV_DOMAINS)
    fname = pick(r, fname, "data/" + fname, "export_" + fname)
    gi = r.randint(0, 1)
    group = cats[gi]
    values = [sorted(r.sample(pool, r.randint(3, len(pool)))) for pool in pools]
    cols = ["id"] + cats + nums
    order = cols[:1] + r.sample(cols[1:], len(cols) - 1)
    n = r.randint(60, 220)
    rows = []
    for i in range(n):
        row = {"id": str(1000 + i * r.randint(1, 3) + i), cats[0]: r.choice(values[0]), cats[1]: r.choice(values[1]),
               nums[0]: str(r.randint(0, 60)), nums[1]: f"{Decimal(r.randint(100, 999999)) / 100:.2f}"}
        rows.append(row)
    thr = sorted(int(x[nums[0]]) for x in rows)[r.randint(n // 5, n // 2)]
    op = r.choice([">=", ">"])
    keep = [x for x in rows if (int(x[nums[0]]) >= thr if op == ">=" else int(x[nums[0]]) > thr)]
    tot: dict[str, Decimal] = defaultdict(Decimal)
    cnt: Counter[str] = Counter()
    for x in keep:
        tot[x[group]] += Decimal(x[nums[1]])
        cnt[x[group]] += 1
    out = pick(r, f"{group}_totals.csv", "totals.csv", f"by_{group}.csv", "summary.csv")
    ranked = sorted(tot, key=lambda g: (-tot[g], g))
    answer = [f"{group},rows,total"] + [f"{g},{cnt[g]},{tot[g]:.2f}" for g in ranked]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(order)
    for x in rows:
        w.writerow([x[c] for c in order])
    words = {">=": "at least", ">": "greater than"}[op]
    prompt = f"""\
`{fname}` is a CSV export with a header row (columns {", ".join(f"`{c}`" for c in order)}).

{pick(r, "Considering only", "Using only", "Taking only")} the rows whose `{nums[0]}` is {words} {thr}, write `{out}`
with the header
`{group},rows,total` and one row per `{group}` value that has such rows: how many rows it has and the
sum of their `{nums[1]}` with exactly two decimals. Order the rows by total, largest first; break ties
by `{group}` ascending. Plain CSV, no quoting needed; leave `{fname}` as it is.
"""
    solve = f"""\
cd /workspace
python3 - <<'PY'
import csv
from decimal import Decimal
tot, cnt = {{}}, {{}}
with open("{fname}", newline="") as f:
    for row in csv.DictReader(f):
        if int(row["{nums[0]}"]) {op} {thr}:
            g = row["{group}"]
            tot[g] = tot.get(g, Decimal(0)) + Decimal(row["{nums[1]}"])
            cnt[g] = cnt.get(g, 0) + 1
with open("{out}", "w") as f:
    f.write("{group},rows,total\\n")
    for g in sorted(tot, key=lambda g: (-tot[g], g)):
        f.write(f"{{g}},{{cnt[g]}},{{tot[g]:.2f}}\\n")
PY
"""
    d = Draft("csv-group-sum", f"Group and sum a CSV column by {group}", "medium", ["data", "csv", "aggregate"],
              prompt, solve, ANSWER_TEST, {}, {fname: buf.getvalue()})
    d.expected = {"output": out, "answer": "\n".join(answer), "inputs": inputs_of(d)}
    d.proxies = {"input_lines": n + 1, "files": 1, "oracle_steps": 4, "answer_lines": len(answer)}
    return d


KINDS = ["upload", "download", "login", "search", "export", "render", "sync", "delete"]
USERS = ["ana", "bo", "cyd", "dee", "eli", "fay", "gus", "hal", "ivy", "jon", "kai", "liv", "max", "nia",
         "oto", "pam", "quin", "rui", "sol", "tam"]


def jsonl_filter(r: random.Random) -> Draft:
    users = sorted(r.sample(USERS, r.randint(6, 14)))
    kinds = sorted(r.sample(KINDS, r.randint(4, 7)))
    n = r.randint(150, 450)
    fname = pick(r, "events.jsonl", "audit.jsonl", "activity.jsonl", "log/events.jsonl")
    recs = []
    used: set[str] = set()
    for i in range(n):
        eid = f"evt-{r.randint(0, 16 ** 6 - 1):06x}"
        while eid in used:
            eid = f"evt-{r.randint(0, 16 ** 6 - 1):06x}"
        used.add(eid)
        recs.append({"id": eid, "user": r.choice(users), "kind": r.choice(kinds),
                     "duration_ms": r.randint(1, 250) * r.choice([1, 1, 2, 3, 5, 8]), "ok": r.random() < 0.7,
                     "seq": i})
    kind = r.choice(kinds)
    variant = r.randint(0, 1)
    out = pick(r, "result.txt", "answer.txt", "selected.txt", "report.txt")
    if variant == 0:
        durs = sorted(x["duration_ms"] for x in recs if x["kind"] == kind)
        thr = durs[len(durs) // 3] if durs else 100
        okv = r.choice([True, False])
        sel = [x for x in recs if x["kind"] == kind and x["duration_ms"] > thr and x["ok"] is okv]
        sel.sort(key=lambda x: (-x["duration_ms"], x["id"]))
        answer = [f"{x['id']} {x['duration_ms']}" for x in sel]
        ask = (f"Find every event with `kind` equal to `{kind}`, `ok` equal to `{str(okv).lower()}` and "
               f"`duration_ms` greater than {thr}. Write `{out}` with one line per such event, `ID DURATION` "
               f"(its `id` and `duration_ms`, one space between), the longest first; break ties by `id` ascending.")
        code = f"""\
sel = [e for e in events if e["kind"] == "{kind}" and e["ok"] is {okv} and e["duration_ms"] > {thr}]
sel.sort(key=lambda e: (-e["duration_ms"], e["id"]))
lines = [f"{{e['id']}} {{e['duration_ms']}}" for e in sel]"""
    else:
        okv = False
        c = Counter(x["user"] for x in recs if x["kind"] == kind and not x["ok"])
        tt: Counter[str] = Counter()
        for x in recs:
            if x["kind"] == kind and not x["ok"]:
                tt[x["user"]] += x["duration_ms"]
        answer = [f"{u} {c[u]} {tt[u]}" for u in sorted(c, key=lambda u: (-c[u], u))]
        ask = (f"For every user, count the failed events (`ok` is `false`) whose `kind` is `{kind}` and add up "
               f"their `duration_ms`. Write `{out}` with one line per user that has any, `USER COUNT TOTAL_MS` "
               f"(single spaces), the most failures first; break ties by user name ascending.")
        code = f"""\
cnt, tot = {{}}, {{}}
for e in events:
    if e["kind"] == "{kind}" and not e["ok"]:
        cnt[e["user"]] = cnt.get(e["user"], 0) + 1
        tot[e["user"]] = tot.get(e["user"], 0) + e["duration_ms"]
lines = [f"{{u}} {{cnt[u]}} {{tot[u]}}" for u in sorted(cnt, key=lambda u: (-cnt[u], u))]"""
    text = "".join(json.dumps(x, separators=(",", ":")) + "\n" for x in recs)
    prompt = f"""\
`{fname}` holds one JSON object per line (fields `id`, `user`, `kind`, `duration_ms`, `ok`, `seq`).

{ask} Nothing else in the file; leave `{fname}` unchanged.
"""
    solve = f"""\
cd /workspace
python3 - <<'PY'
import json
with open("{fname}") as f:
    events = [json.loads(line) for line in f if line.strip()]
{code}
with open("{out}", "w") as f:
    f.write("".join(line + "\\n" for line in lines))
PY
"""
    d = Draft("jsonl-filter", f"Filter and summarise JSON-lines events of kind {kind}", "medium",
              ["data", "json", "jq"], prompt, solve, ANSWER_TEST, {}, {fname: text})
    d.expected = {"output": out, "answer": "\n".join(answer), "inputs": inputs_of(d)}
    d.proxies = {"input_lines": n, "files": 1, "oracle_steps": 4, "answer_lines": len(answer)}
    return d


ROLES = ["web", "db", "cache", "queue", "batch", "proxy", "search"]
ENVS = ["prod", "staging", "dev"]


def json_inventory(r: random.Random) -> Draft:
    n = r.randint(18, 50)
    fname = pick(r, "inventory.json", "hosts.json", "fleet.json", "infra/inventory.json")
    hosts = []
    seen: set[str] = set()
    ports_pool = [22, 80, 443, 5432, 6379, 8080, 9090, 9200, 5672, 3000]
    for _ in range(n):
        role = r.choice(ROLES)
        nm = f"{role}-{r.choice(WORDS)}-{r.randint(1, 99):02d}"
        if nm in seen:
            continue
        seen.add(nm)
        hosts.append({"name": nm, "role": role, "env": r.choice(ENVS), "cpus": r.choice([1, 2, 4, 8, 16, 32]),
                      "mem_gb": r.choice([2, 4, 8, 16, 32, 64, 128]),
                      "ports": sorted(r.sample(ports_pool, r.randint(1, 4))),
                      "tags": sorted(r.sample(["backup", "monitored", "public", "legacy", "gpu", "spot"],
                                              r.randint(0, 3)))})
    env = r.choice(ENVS)
    if r.random() < 0.5:
        port = r.choice([p for h in hosts for p in h["ports"]])
        cond, py = f"listens on port {port} (in `ports`)", f"{port} in h['ports']"
    else:
        tag = r.choice(["backup", "monitored", "public", "legacy", "gpu", "spot"])
        cond, py = f"carries the tag `{tag}`", f"'{tag}' in h['tags']"
    sel = sorted((h for h in hosts if h["env"] == env and eval(py, {"h": h})), key=lambda h: h["name"])  # noqa: S307
    out = pick(r, "selected_hosts.txt", "hosts.txt", "matches.txt", "capacity.txt")
    answer = [f"{h['name']} {h['cpus']} {h['mem_gb']}" for h in sel] + [
        f"TOTAL {sum(h['cpus'] for h in sel)} {sum(h['mem_gb'] for h in sel)}"]
    text = json.dumps({"generated_by": "cmdb-export", "hosts": hosts}, indent=r.choice([2, 4])) + "\n"
    prompt = f"""\
`{fname}` is an export of the host inventory (`hosts`: objects with `name`, `role`, `env`, `cpus`,
`mem_gb`, `ports`, `tags`).

{pick(r, "Select", "Find", "Pick out")} the hosts whose `env` is `{env}` and that {cond}. Write `{out}` with one
line per
such host, sorted by name (ascending): `NAME CPUS MEM_GB`; then a last line `TOTAL CPUS MEM_GB` with the sums over
those hosts (`TOTAL 0 0` when there are none). Single spaces, nothing else; leave `{fname}` unchanged.
"""
    solve = f"""\
cd /workspace
python3 - <<'PY'
import json
hosts = json.load(open("{fname}"))["hosts"]
sel = sorted((h for h in hosts if h["env"] == "{env}" and {py}), key=lambda h: h["name"])
lines = [f"{{h['name']}} {{h['cpus']}} {{h['mem_gb']}}" for h in sel]
lines.append(f"TOTAL {{sum(h['cpus'] for h in sel)}} {{sum(h['mem_gb'] for h in sel)}}")
open("{out}", "w").write("\\n".join(lines) + "\\n")
PY
"""
    d = Draft("json-inventory", "Select hosts from a JSON inventory and total their capacity", "medium",
              ["data", "json", "jq"], prompt, solve, ANSWER_TEST, {}, {fname: text})
    d.expected = {"output": out, "answer": "\n".join(answer), "inputs": inputs_of(d)}
    d.proxies = {"input_lines": text.count("\n"), "files": 1, "oracle_steps": 4, "answer_lines": len(answer)}
    return d


# --- git: a bundle written byte by byte (no git needed, the same bytes everywhere) ----------------

def _git_obj(kind: str, data: bytes, objects: dict[str, tuple[str, bytes]]) -> str:
    sha = hashlib.sha1(f"{kind} {len(data)}".encode() + b"\0" + data).hexdigest()
    objects.setdefault(sha, (kind, data))
    return sha


def _git_tree(files: dict[str, bytes], objects: dict[str, tuple[str, bytes]]) -> str:
    entries: dict[str, Any] = {}
    for rel, data in files.items():
        head, _, rest = rel.partition("/")
        if rest:
            entries.setdefault(head, {})[rest] = data
        else:
            entries[head] = data
    items = []
    for nm, v in entries.items():
        if isinstance(v, dict):
            items.append((nm + "/", b"40000 " + nm.encode() + b"\0" + bytes.fromhex(_git_tree(v, objects))))
        else:
            items.append((nm, b"100644 " + nm.encode() + b"\0" + bytes.fromhex(_git_obj("blob", v, objects))))
    return _git_obj("tree", b"".join(e for _, e in sorted(items)), objects)


def _stored_zlib(data: bytes) -> bytes:
    out = bytearray(b"\x78\x01")
    chunks = [data[i:i + 65535] for i in range(0, len(data), 65535)] or [b""]
    for i, c in enumerate(chunks):
        out.append(1 if i == len(chunks) - 1 else 0)
        out += struct.pack("<HH", len(c), len(c) ^ 0xFFFF) + c
    out += struct.pack(">I", zlib.adler32(data) & 0xFFFFFFFF)
    return bytes(out)


def _bundle(objects: dict[str, tuple[str, bytes]], head: str) -> bytes:
    types = {"commit": 1, "tree": 2, "blob": 3}
    pack = bytearray(b"PACK" + struct.pack(">II", 2, len(objects)))
    for sha in sorted(objects):
        kind, data = objects[sha]
        size = len(data)
        b = (types[kind] << 4) | (size & 15)
        size >>= 4
        while size:
            pack.append(b | 0x80)
            b = size & 0x7F
            size >>= 7
        pack.append(b)
        pack += _stored_zlib(data)
    pack += hashlib.sha1(pack).digest()
    return f"# v2 git bundle\n{head} refs/heads/main\n\n".encode() + bytes(pack)


PEOPLE = [("Ada Byron", "ada@example.org"), ("Linus Tor", "linus@example.org"), ("Grace Hop", "grace@example.org"),
          ("Ken Thom", "ken@example.org"), ("Barbara Lis", "barbara@example.org"), ("Dennis Rit", "dennis@example.org"),
          ("Margaret Ham", "margaret@example.org"), ("Alan Tu", "alan@example.org")]


def git_find(r: random.Random) -> Draft:
    objects: dict[str, tuple[str, bytes]] = {}
    people = r.sample(PEOPLE, r.randint(3, 5))
    svc = r.choice(SERVICES)
    cfg = f"config/{svc}.ini"
    keys = {"workers": str(r.randint(1, 8)), "timeout": str(r.randint(5, 60)), "log_level": "info",
            "cache_mb": str(r.choice([64, 128, 256])), "retries": str(r.randint(0, 5))}
    target_key = r.choice(sorted(keys))
    tree: dict[str, bytes] = {}

    def render() -> bytes:
        return ("[" + svc + "]\n" + "".join(f"{k} = {v}\n" for k, v in keys.items())).encode()

    tree[cfg] = render()
    tree["README.md"] = f"# {svc}\n\nThe {svc} service.\n".encode()
    mods = [f"src/{w}.py" for w in r.sample(WORDS, 4)]
    for m in mods:
        tree[m] = f"VALUE = {r.randint(0, 999)}\n".encode()
    n = r.randint(18, 40)
    variant = r.choice(["value", "deleted", "author"])
    doomed = f"docs/{r.choice(WORDS)}-{r.randint(1, 9)}.md"
    t0 = r.randint(1_600_000_000, 1_700_000_000)
    parent = None
    hashes: list[str] = []
    culprit = None
    set_at = r.randint(n // 3, 2 * n // 3)
    target_value = None
    author_dir = r.choice(["src", "config", "docs"])
    target_author = r.choice(people)
    first_by_author = None
    for i in range(n):
        who = r.choice(people)
        msg = r.choice(["Refactor", "Tweak values", "Update docs", "Fix typo", "Tune settings", "Clean up",
                        "Small fix", "Adjust defaults"]) + f" (#{r.randint(100, 999)})"
        if i == 0:
            msg = "Initial commit"
        else:
            m = r.choice(mods)
            tree[m] = tree[m] + f"# rev {i}: {r.randint(0, 99999)}\n".encode()
            if r.random() < 0.3:
                k = r.choice([k for k in keys if k != target_key])
                keys[k] = str(r.randint(1, 500))
                tree[cfg] = render()
            if r.random() < 0.25:
                tree[f"docs/notes-{i}.md"] = f"Notes {i}: {r.choice(WORDS)}\n".encode()
        if variant == "value" and i == set_at:
            target_value = str(r.randint(1000, 9999))
            keys[target_key] = target_value
            tree[cfg] = render()
        if variant == "value" and i == set_at + 2:
            tree["docs/tuning.md"] = f"Try `{target_key} = {target_value}` for heavy load.\n".encode()
        if variant == "value" and i > set_at + 3 and r.random() < 0.1 and keys[target_key] == target_value:
            keys[target_key] = str(r.randint(10, 99))
            tree[cfg] = render()
        if variant == "deleted":
            if i == 2:
                tree[doomed] = b"Deprecated procedure.\n"
            if i == set_at:
                del tree[doomed]
                msg = r.choice(["Tidy docs", "Remove stale page", "Clean up"]) + f" (#{r.randint(100, 999)})"
        if variant == "author" and i == set_at:
            who = target_author
            if author_dir == "docs":
                tree[f"docs/guide-{i}.md"] = b"Guide.\n"
            elif author_dir == "config":
                keys["retries"] = str(r.randint(6, 9))
                tree[cfg] = render()
        if variant == "author" and i < set_at and who == target_author:
            who = r.choice([p for p in people if p != target_author])
        t = t0 + i * r.randint(600, 20000)
        tsha = _git_tree(tree, objects)
        body = f"tree {tsha}\n" + (f"parent {parent}\n" if parent else "")
        body += f"author {who[0]} <{who[1]}> {t} +0000\ncommitter {who[0]} <{who[1]}> {t} +0000\n\n{msg}\n"
        parent = _git_obj("commit", body.encode(), objects)
        hashes.append(parent)
        if variant == "author" and i == set_at:
            first_by_author = parent
        if i == set_at:
            culprit = parent
    assert culprit is not None
    out = pick(r, "culprit.txt", "commit.txt", "answer.txt", "found.txt")
    bundle = pick(r, "repo.bundle", "service.bundle", f"{svc}.bundle")
    if variant == "value":
        q = (f"Find the commit that set `{target_key}` to `{target_value}` in `{cfg}` (the line "
             f"`{target_key} = {target_value}` first appears in that file there)")
        solve_find = f"""\
for c in $(git -C /tmp/repo log --reverse --format=%H -- {cfg}); do
  if git -C /tmp/repo show "$c:{cfg}" | grep -qxF '{target_key} = {target_value}'; then
    echo "$c" > /workspace/{out}; break
  fi
done"""
    elif variant == "deleted":
        q = f"Someone deleted `{doomed}`. Find the commit that removed it"
        solve_find = f"git -C /tmp/repo log --diff-filter=D --format=%H -- {doomed} > /workspace/{out}"
    else:
        q = (f"Find the oldest commit authored by {target_author[0]} <{target_author[1]}> that changed a file "
             f"under `{author_dir}/`")
        solve_find = (f"git -C /tmp/repo log --reverse --author='{target_author[1]}' --format=%H -- {author_dir}/ "
                      f"| head -n 1 > /workspace/{out}")
        culprit = first_by_author
    prompt = f"""\
`{bundle}` is a git bundle of the {svc} service's repository (branch `main`).

{q}, and write its full 40-character commit hash (and nothing else) to `{out}` in the workspace root.
Leave `{bundle}` as it is.
"""
    solve = f"""\
cd /workspace
rm -rf /tmp/repo
git clone -q -b main {bundle} /tmp/repo
{solve_find}
"""
    tests = '''

@check("hash-correct")
def test_hash():
    import re
    text = fs_state.read_text(EXPECTED["output"]).strip()
    assert re.fullmatch(r"[0-9a-f]{40}", text), f"not one full hash: {text[:100]!r}"
    assert text == EXPECTED["answer"]
'''
    d = Draft("git-find-commit", "Find a commit in a repository's history", "medium", ["git", "history"],
              prompt, solve, tests, {}, {bundle: _bundle(objects, hashes[-1])})
    d.expected = {"output": out, "answer": culprit, "inputs": inputs_of(d)}
    d.proxies = {"input_lines": n, "files": 1, "oracle_steps": 3, "answer_lines": 1}
    return d


# --- a C build ---------------------------------------------------------------------------------------

def make_run(r: random.Random) -> Draft:
    proj = pick(r, "calc", "stats", "tool", "meter", "digest")
    prog = pick(r, "sumup", "crunch", "tally", "scan", "mixer")
    mod = pick(r, "mix", "fold", "hashing", "accum")
    mult, modulus, offset = r.randint(3, 997), r.randint(10_007, 999_999_937), r.randint(0, 9999)
    n = r.randint(40, 250)
    nums = [r.randint(-20000, 20000) for _ in range(n)]
    per_line = r.randint(1, 6)
    data = "\n".join(" ".join(str(x) for x in nums[i:i + per_line]) for i in range(0, n, per_line)) + "\n"
    acc = 0
    for x in nums:
        acc = (acc * mult + abs(x) + offset) % modulus
    answer = [f"count {n}", f"sum {sum(nums)}", f"max {max(nums)}", f"min {min(nums)}", f"checksum {acc}"]
    header = f"""\
#ifndef {mod.upper()}_H
#define {mod.upper()}_H

#define MULT {mult}ULL
#define MODULUS {modulus}ULL
#define OFFSET {offset}ULL

unsigned long long {mod}_step(unsigned long long acc, long long x);

#endif
"""
    modc = f"""\
#include "{mod}.h"

unsigned long long {mod}_step(unsigned long long acc, long long x)
{{
    unsigned long long v = (unsigned long long)(x < 0 ? -x : x);
    return (acc * MULT + v + OFFSET) % MODULUS;
}}
"""
    mainc = f"""\
#include <stdio.h>
#include "{mod}.h"

int main(int argc, char **argv)
{{
    if (argc != 2) {{
        fprintf(stderr, "usage: %s FILE\\n", argv[0]);
        return 2;
    }}
    FILE *f = fopen(argv[1], "r");
    if (!f) {{
        perror(argv[1]);
        return 1;
    }}
    long long x, sum = 0, max = 0, min = 0;
    unsigned long long acc = 0;
    long count = 0;
    while (fscanf(f, "%lld", &x) == 1) {{
        if (count == 0 || x > max) max = x;
        if (count == 0 || x < min) min = x;
        sum += x;
        acc = {mod}_step(acc, x);
        count++;
    }}
    fclose(f);
    printf("count %ld\\nsum %lld\\nmax %lld\\nmin %lld\\nchecksum %llu\\n", count, sum, max, min, acc);
    return 0;
}}
"""
    good = f"""\
CC = gcc
CFLAGS = -O2 -Wall -Iinclude
OBJS = build/main.o build/{mod}.o

build/{prog}: $(OBJS)
\t$(CC) $(CFLAGS) -o $@ $^

build/%.o: src/%.c include/{mod}.h
\t@mkdir -p build
\t$(CC) $(CFLAGS) -c $< -o $@

clean:
\trm -rf build

.PHONY: clean
"""
    bug = r.choice(["object", "include", "spaces", "srcdir", "mkdir"])
    broken = {
        "object": good.replace(f"OBJS = build/main.o build/{mod}.o", "OBJS = build/main.o"),
        "include": good.replace("CFLAGS = -O2 -Wall -Iinclude", "CFLAGS = -O2 -Wall"),
        "spaces": good.replace("\t$(CC) $(CFLAGS) -o $@ $^", "    $(CC) $(CFLAGS) -o $@ $^"),
        "srcdir": good.replace("build/%.o: src/%.c", "build/%.o: %.c"),
        "mkdir": good.replace("\t@mkdir -p build\n", ""),
    }[bug]
    inp = pick(r, "input.txt", "numbers.txt", "data.txt", "values.txt")
    out = pick(r, "result.txt", "output.txt", "report.txt", "run.txt")
    files = {f"{proj}/Makefile": broken, f"{proj}/src/main.c": mainc, f"{proj}/src/{mod}.c": modc,
             f"{proj}/include/{mod}.h": header, f"{proj}/{inp}": data}
    prompt = f"""\
The C project in `{proj}/` should build the program `{proj}/build/{prog}` with `make -C {proj}`, but the
build is broken. Repair `{proj}/Makefile` (do not change the C sources, the header or `{proj}/{inp}`) so that,
from a clean tree, `make -C {proj}` builds `build/{prog}` and `make -C {proj} clean` removes `build/`.

Then {pick(r, "run", "execute")} the program on `{proj}/{inp}` (`build/{prog} {inp}` from inside `{proj}/`) and save
exactly what it prints on standard output to `{proj}/{out}`. Leave the tree built.
"""
    solve = f"""\
cd /workspace/{proj}
cat > Makefile <<'MK'
{good.rstrip()}
MK
make
./build/{prog} {inp} > {out}
"""
    tests = f'''

@check("answer-correct")
def test_answer():
    got = lines_of(EXPECTED["output"])
    want = EXPECTED["answer"].splitlines()
    assert got == want, first_difference(got, want)


@check("left-built")
def test_left_built():
    assert fs_state.path("{proj}/build/{prog}").is_file()
    assert fs_state.mode("{proj}/build/{prog}") & 0o100


@check("clean-rebuild")
def test_clean_rebuild():
    ws = fs_state.scratch_copy()
    res = fs_state.run("make -C {proj} clean && test ! -e {proj}/build && make -C {proj}", cwd=ws, timeout=120)
    assert res.returncode == 0, (res.stdout + res.stderr)[-1500:]
    run = fs_state.run(["build/{prog}", "{inp}"], cwd=ws / "{proj}")
    assert run.returncode == 0, run.stderr[-500:]
    assert run.stdout.splitlines() == EXPECTED["answer"].splitlines(), run.stdout[-500:]
'''
    d = Draft("make-run", "Repair a Makefile, build and run the program", "medium", ["build", "make", "c"],
              prompt, solve, tests, {}, files)
    d.expected = {"output": f"{proj}/{out}", "answer": "\n".join(answer),
                  "inputs": inputs_of(d, skip=(f"{proj}/Makefile",))}
    d.limits = {"step_timeout_s": 60, "verify_timeout_s": 90, "max_steps": 50}
    d.proxies = {"input_lines": data.count("\n"), "files": 5, "oracle_steps": 4, "answer_lines": len(answer)}
    return d


# --- config edit -----------------------------------------------------------------------------------

INI_KEYS = ["host", "port", "timeout", "retries", "workers", "max_connections", "pool_size", "log_level",
            "cache_ttl", "buffer_kb", "user", "path", "enabled", "interval_s", "threshold"]
SECTIONS = ["server", "database", "cache", "logging", "queue", "auth", "metrics", "storage", "mail", "scheduler"]


def _ini_value(r: random.Random, key: str) -> str:
    if key == "host":
        return f"{r.choice(WORDS)}.internal"
    if key == "log_level":
        return r.choice(["debug", "info", "warning", "error"])
    if key == "user":
        return r.choice(USERS)
    if key == "path":
        return f"/var/lib/{r.choice(WORDS)}"
    if key == "enabled":
        return r.choice(["true", "false"])
    return str(r.randint(1, 9000))


def config_edit(r: random.Random) -> Draft:
    fname = pick(r, "app.ini", "settings.ini", "service.conf", "etc/app.ini", "config/main.ini")
    secs = r.sample(SECTIONS, r.randint(3, 5))
    conf: list[tuple[str, list[tuple[str, str]]]] = []
    for s in secs:
        keys = r.sample(INI_KEYS, r.randint(3, 7))
        conf.append((s, [(k, _ini_value(r, k)) for k in keys]))

    def render(c: list[tuple[str, list[tuple[str, str]]]]) -> str:
        parts = [f"# {fname} - managed by hand\n"]
        for s, kv in c:
            parts.append(f"\n# {s} settings\n[{s}]\n" + "".join(f"{k} = {v}\n" for k, v in kv))
        return "".join(parts)

    before = render(conf)
    ops = []
    new = [(s, list(kv)) for s, kv in conf]
    touched: set[tuple[str, str]] = set()
    for kind in r.sample(["set", "delete", "add", "rename", "set2"], r.randint(2, 3)):
        si = r.randrange(len(new))
        s, kv = new[si]
        free = [j for j, (k, _) in enumerate(kv) if (s, k) not in touched]
        if not free:
            continue
        j = r.choice(free)
        k, v = kv[j]
        if kind in ("set", "set2"):
            nv = _ini_value(r, k)
            while nv == v:
                nv = str(r.randint(9001, 99999))
            kv[j] = (k, nv)
            touched.add((s, k))
            ops.append(f"in section `[{s}]`, set `{k}` to `{nv}`")
        elif kind == "delete" and len(kv) > 2:
            kv.pop(j)
            touched.add((s, k))
            ops.append(f"remove the `{k}` line from section `[{s}]`")
        elif kind == "add":
            k = r.choice([x for x in INI_KEYS if x not in dict(kv)])
            v = _ini_value(r, k)
            kv.append((k, v))
            touched.add((s, k))
            ops.append(f"add `{k} = {v}` as the last line of section `[{s}]`")
        elif kind == "rename":
            k2 = k + r.choice(["_max", "_limit", "_default", "_old"])
            kv[j] = (k2, v)
            touched.update({(s, k), (s, k2)})
            ops.append(f"rename the key `{k}` of section `[{s}]` to `{k2}` (keeping its value)")
    if not ops:
        s, kv = new[0]
        k, v = kv[0]
        kv[0] = (k, "12345" if v != "12345" else "54321")
        ops.append(f"in section `[{s}]`, set `{k}` to `{kv[0][1]}`")
    after = render(new)
    prompt = f"""\
Edit `{fname}` in place ({pick(r, "an INI file", "an INI-style configuration", "the service's configuration")}:
`[section]` headers, `key = value` lines, `#` comments). Make exactly these changes:

""" + "".join(f"- {o};\n" for o in ops) + """
Keys with the same name may appear in other sections: change only the section named. Keep everything else
byte for byte as it is: the other lines, their order, comments and blank lines, and the `key = value`
spacing.
"""
    solve = f"""\
cd /workspace
cat > {fname} <<'INI'
{after.rstrip()}
INI
"""
    tests = '''

@check("config-edited")
def test_config():
    got = lines_of(EXPECTED["output"])
    want = EXPECTED["answer"].splitlines()
    assert got == want, first_difference(got, want)
'''
    d = Draft("config-edit", "Edit keys of an INI configuration in place", "easy", ["config", "sed", "ini"],
              prompt, solve, tests, {}, {fname: before})
    d.expected = {"output": fname, "answer": after.rstrip("\n"), "inputs": inputs_of(d, skip=(fname,))}
    d.proxies = {"input_lines": before.count("\n"), "files": 1, "oracle_steps": len(ops), "answer_lines":
                 after.count("\n")}
    return d


# --- permissions -----------------------------------------------------------------------------------

def permissions(r: random.Random) -> Draft:
    top = pick(r, "deploy", "site", "release", "app", "srv")
    bin_ = pick(r, "bin", "scripts", "tools")
    secret = pick(r, "private", "secrets", "keys")
    pub = pick(r, "www", "public", "static")
    conf = pick(r, "config", "etc", "conf")
    sext = r.choice([".env", ".key", ".pem"])
    files: dict[str, str] = {}
    for _ in range(r.randint(2, 4)):
        files[f"{top}/{bin_}/{name(r)}"] = f"#!/bin/sh\necho {r.choice(WORDS)} {r.randint(1, 999)}\n"
    for _ in range(r.randint(1, 3)):
        rel = f"{top}/{secret}/{name(r)}{r.choice(['.key', '.pem', '.txt'])}"
        files[rel] = f"SECRET{r.randint(10 ** 6, 10 ** 7)}\n"
    for _ in range(r.randint(2, 5)):
        rel = f"{top}/{pub}/{name(r)}{r.choice(['.html', '.css', '.js', '.txt'])}"
        files[rel] = f"content {r.randint(1, 10 ** 6)}\n"
    for _ in range(r.randint(2, 4)):
        files[f"{top}/{conf}/{name(r)}{r.choice(['.conf', '.yaml', '.ini'])}"] = f"value = {r.randint(1, 9999)}\n"
    for _ in range(r.randint(1, 2)):
        files[f"{top}/{conf}/{name(r)}{sext}"] = f"TOKEN={r.randint(10 ** 8, 10 ** 9)}\n"
    for _ in range(r.randint(1, 2)):
        files[f"{top}/{pub}/{name(r)}.sh"] = f"#!/bin/sh\nexit {r.randint(0, 3)}\n"

    def want(rel: str) -> int:
        parts = rel.split("/")
        if parts[1] == secret or rel.endswith(sext):
            return 0o600
        if parts[1] == bin_ or rel.endswith(".sh"):
            return 0o755
        return 0o644

    modes: dict[str, int] = {}
    targets: dict[str, int] = {}
    wrong_pool = [0o644, 0o664, 0o755, 0o775, 0o744, 0o654, 0o645, 0o754]
    for rel in sorted(files):
        targets[rel] = want(rel)
        modes[rel] = r.choice(wrong_pool)
    dirs = sorted({top} | {"/".join(rel.split("/")[:2]) for rel in files})
    for dd in dirs:
        targets[dd] = 0o700 if dd == f"{top}/{secret}" else 0o755
        modes[dd] = r.choice([0o755, 0o775])
    wrong = [rel for rel in targets if modes[rel] != targets[rel]]
    while len(wrong) < 4:
        rel = r.choice(sorted(files))
        modes[rel] = r.choice([m for m in wrong_pool if m != targets[rel]])
        wrong = [rel for rel in targets if modes[rel] != targets[rel]]
    rules = [f"every directory (including `{top}/` itself) is `755`, except `{top}/{secret}/`, which is `700`",
             f"every file in `{top}/{secret}/` and every file named `*{sext}` anywhere below `{top}/` is `600`",
             f"otherwise, every file in `{top}/{bin_}/` and every `*.sh` file is `755`",
             "every other file is `644`"]
    verb = pick(r, "Fix the permissions", "Set the file modes", "Repair the modes")
    prompt = f"""\
{verb} under `{top}/` (do not change any file's contents, and do not add, move or remove files):

""" + "".join(f"- {x};\n" for x in rules[:-1]) + f"- {rules[-1]}.\n"
    solve = f"""\
cd /workspace/{top}
find . -type d -exec chmod 755 {{}} +
find . -type f -exec chmod 644 {{}} +
chmod 755 {bin_}/*
find . -type f -name '*.sh' -exec chmod 755 {{}} +
find . -type f -name '*{sext}' -exec chmod 600 {{}} +
chmod 600 {secret}/*
chmod 700 {secret}
"""
    tests = '''

@check("modes-correct")
def test_modes():
    wrong = {rel: oct(fs_state.mode(rel)) for rel, m in EXPECTED["modes"].items() if fs_state.mode(rel) != m}
    assert not wrong, wrong


@check("tree-unchanged", kind="collateral")
def test_tree():
    top = EXPECTED["top"]
    assert sorted(top + "/" + p for p in fs_state.listing(top)) == sorted(x for x in EXPECTED["modes"] if x != top)
'''
    d = Draft("permissions", "Set file permissions for a deployment tree", "medium",
              ["files", "permissions", "chmod", "find"], prompt, solve, tests, {}, dict(files), modes)
    answer = "\n".join(f"{rel} {targets[rel]:o}" for rel in sorted(targets))
    d.expected = {"output": top, "answer": answer, "inputs": inputs_of(d), "top": top,
                  "modes": {rel: targets[rel] for rel in sorted(targets)}}
    d.proxies = {"input_lines": len(files), "files": len(files), "oracle_steps": 7, "answer_lines": len(targets)}
    return d


# --- file sizes --------------------------------------------------------------------------------

def find_large(r: random.Random) -> Draft:
    top = pick(r, "data", "archive", "share", "uploads", "var")
    subs = r.sample(["logs", "img", "reports", "tmp", "cache", "exports", "media", "old"], r.randint(2, 4))
    exts = [".log", ".csv", ".bin", ".txt", ".json"]
    files: dict[str, bytes] = {}
    for _ in range(r.randint(14, 32)):
        rel = f"{top}/{r.choice(subs)}/" + (f"{r.choice(subs)}/" if r.random() < 0.3 else "")
        rel += f"{name(r)}-{r.randint(1, 99)}{r.choice(exts)}"
        size = int(r.choice([r.randint(0, 3000), r.randint(3000, 30000), r.randint(100, 60000)]))
        line = f"{r.choice(WORDS)} {r.randint(0, 10 ** 6)}\n".encode()
        files[rel] = (line * (size // len(line) + 1))[:size]
    ext = r.choice([None] + exts)
    sizes = sorted(len(v) for k, v in files.items() if ext is None or k.endswith(ext))
    if len(sizes) < 2:
        ext = None
        sizes = sorted(len(v) for v in files.values())
    thr = sizes[r.randint(len(sizes) // 4, len(sizes) - 2)] - r.randint(0, 50)
    thr = max(thr, 1)
    sel = sorted(((len(v), k) for k, v in files.items() if len(v) > thr and (ext is None or k.endswith(ext))),
                 key=lambda x: (-x[0], x[1]))
    out = pick(r, "large_files.txt", "big.txt", "report.txt", "sizes.txt")
    answer = [f"{s} {k}" for s, k in sel]
    which = "file" if ext is None else f"`*{ext}` file"
    prompt = f"""\
Find every {which} anywhere below `{top}/` that is larger than {thr} bytes (strictly). Write `{out}` with one line
per file: `SIZE PATH`, the size in bytes and the path relative to the workspace (starting with `{top}/`),
largest first; break ties by path in ascending byte order. Nothing else in the file; change nothing under `{top}/`.
"""
    pat = "" if ext is None else f" -name '*{ext}'"
    solve = f"""\
cd /workspace
find {top} -type f{pat} -size +{thr}c -printf '%s %p\\n' | LC_ALL=C sort -k1,1nr -k2,2 > {out}
"""
    d = Draft("find-large", "List large files below a folder by size", "easy", ["files", "find", "sort"],
              prompt, solve, ANSWER_TEST, {}, dict(files))
    d.expected = {"output": out, "answer": "\n".join(answer), "inputs": inputs_of(d)}
    d.proxies = {"input_lines": 0, "files": len(files), "oracle_steps": 2, "answer_lines": len(answer)}
    return d


# --- checksums ---------------------------------------------------------------------------------

def checksums(r: random.Random) -> Draft:
    top = pick(r, "downloads", "artifacts", "mirror", "release", "dist")
    names = sorted({f"{r.choice(['pkg', 'lib', 'tool', 'data'])}-{r.choice(WORDS)}-{r.randint(0, 9)}."
                    f"{r.randint(0, 20)}.{r.choice(['tar', 'zip', 'bin', 'img'])}" for _ in range(r.randint(10, 24))})
    files: dict[str, bytes] = {}
    sums = []
    bad, missing = [], []
    for nm in names:
        data = (f"{nm}\n" + "".join(f"{r.randint(0, 10 ** 9)}\n" for _ in range(r.randint(5, 60)))).encode()
        sums.append(f"{_sha(data)}  {nm}")
        roll = r.random()
        if roll < 0.18:
            bad.append(nm)
            data = data[:-2] + bytes([data[-2] ^ 1]) + data[-1:]
        elif roll < 0.26:
            missing.append(nm)
            continue
        files[f"{top}/{nm}"] = data
    if not bad:
        nm = names[r.randrange(len(names))]
        if nm in missing:
            missing.remove(nm)
            files[f"{top}/{nm}"] = (f"{nm}\n").encode()
        else:
            files[f"{top}/{nm}"] = files[f"{top}/{nm}"] + b"\n"
        bad.append(nm)
    for _ in range(r.randint(0, 2)):
        files[f"{top}/extra-{r.choice(WORDS)}.txt"] = b"not listed\n"
    out = pick(r, "verify_report.txt", "bad_files.txt", "checksums.txt", "integrity.txt")
    # The list's name is drawn too: with the folder and the output, 80 ways, so a sibling's
    # commands (the template's whole routine) are right for few others.
    listing = pick(r, "SHA256SUMS", "sha256sums.txt", "CHECKSUMS", "checksums.sha256")
    files[f"{top}/{listing}"] = "\n".join(sums) + "\n"
    answer = sorted([f"{nm}: FAILED" for nm in bad] + [f"{nm}: MISSING" for nm in missing])
    prompt = f"""\
`{top}/{listing}` lists the SHA-256 checksums of the files in `{top}/` (the `sha256sum` format). Check every listed
file. Write `{out}` (in the workspace root) with one line per listed file that does not pass: `NAME: FAILED` when its
content does not match, `NAME: MISSING` when it does not exist; NAME as written in `{listing}`. Sort the lines in
ascending byte order; files that pass and files that are not listed do not appear. Change nothing under `{top}/`.
"""
    solve = f"""\
cd /workspace/{top}
sha256sum -c {listing} 2>/dev/null | sed -n 's/: FAILED$/: FAILED/p; s/: FAILED open or read$/: MISSING/p' |
  LC_ALL=C sort > ../{out}
"""
    d = Draft("checksum-verify", "Verify files against a SHA256SUMS list", "easy", ["files", "checksums"],
              prompt, solve, ANSWER_TEST, {}, dict(files))
    d.expected = {"output": out, "answer": "\n".join(answer), "inputs": inputs_of(d)}
    d.proxies = {"input_lines": len(sums), "files": len(files), "oracle_steps": 3, "answer_lines": len(answer)}
    return d


# --- a join --------------------------------------------------------------------------------------

COUNTRIES = ["AT", "BE", "CH", "DE", "DK", "ES", "FI", "FR", "IE", "IT", "NL", "NO", "PL", "PT", "SE"]
FIRST = ["Ana", "Ben", "Chloe", "Dev", "Elif", "Femi", "Gita", "Hugo", "Ines", "Jun", "Kofi", "Lena", "Mika",
         "Noor", "Omar", "Pia", "Ravi", "Sara", "Timo", "Uma"]


def csv_join(r: random.Random) -> Draft:
    countries = sorted(r.sample(COUNTRIES, r.randint(4, 9)))
    tiers = ["free", "pro", "enterprise"]
    nc = r.randint(15, 45)
    customers = []
    for i in range(nc):
        customers.append({"customer_id": str(100 + i), "name": f"{r.choice(FIRST)} {r.choice(WORDS).title()}",
                          "country": r.choice(countries), "tier": r.choice(tiers)})
    no = r.randint(60, 260)
    statuses = ["paid", "refunded", "pending", "cancelled"]
    orders = []
    for i in range(no):
        orders.append({"order_id": f"o{5000 + i}", "customer_id": r.choice(customers)["customer_id"],
                       "status": r.choices(statuses, [10, 2, 3, 2])[0],
                       "amount": f"{Decimal(r.randint(100, 250000)) / 100:.2f}"})
    group = r.choice(["country", "tier"])
    status = r.choice(["paid", "refunded", "pending"])
    cust = {c["customer_id"]: c for c in customers}
    tot: dict[str, Decimal] = defaultdict(Decimal)
    cnt: Counter[str] = Counter()
    for o in orders:
        if o["status"] == status:
            g = cust[o["customer_id"]][group]
            tot[g] += Decimal(o["amount"])
            cnt[g] += 1
    out = pick(r, f"{status}_by_{group}.csv", "totals.csv", "report.csv", "joined.csv")
    answer = [f"{group},orders,total"] + [f"{g},{cnt[g]},{tot[g]:.2f}" for g in sorted(tot, key=lambda g: (-tot[g], g))]
    cfile, ofile = pick(r, "customers.csv", "clients.csv"), pick(r, "orders.csv", "sales.csv")

    def dump(rows: list[dict[str, str]]) -> str:
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
        return buf.getvalue()

    prompt = f"""\
`{cfile}` (`customer_id,name,country,tier`) and `{ofile}` (`order_id,customer_id,status,amount`) are exports
from a shop.

{pick(r, "Join them", "Combine the two files", "Match every order to its customer")} and, over the orders whose `status`
is `{status}`, compute per customer `{group}` the
number of such orders and the sum of their `amount` (exactly two decimals). Write `{out}` with the header
`{group},orders,total` and one row per `{group}` that has such orders, by total, largest first; break ties by `{group}`
ascending. Plain CSV; leave both inputs as they are.
"""
    solve = f"""\
cd /workspace
python3 - <<'PY'
import csv
from decimal import Decimal
cust = {{c["customer_id"]: c for c in csv.DictReader(open("{cfile}", newline=""))}}
tot, cnt = {{}}, {{}}
for o in csv.DictReader(open("{ofile}", newline="")):
    if o["status"] == "{status}":
        g = cust[o["customer_id"]]["{group}"]
        tot[g] = tot.get(g, Decimal(0)) + Decimal(o["amount"])
        cnt[g] = cnt.get(g, 0) + 1
with open("{out}", "w") as f:
    f.write("{group},orders,total\\n")
    for g in sorted(tot, key=lambda g: (-tot[g], g)):
        f.write(f"{{g}},{{cnt[g]}},{{tot[g]:.2f}}\\n")
PY
"""
    d = Draft("csv-join", f"Join two CSV exports and total {status} orders per {group}", "medium",
              ["data", "csv", "join"], prompt, solve, ANSWER_TEST, {}, {cfile: dump(customers), ofile: dump(orders)})
    d.expected = {"output": out, "answer": "\n".join(answer), "inputs": inputs_of(d)}
    d.proxies = {"input_lines": nc + no + 2, "files": 2, "oracle_steps": 4, "answer_lines": len(answer)}
    return d


# --- the set -------------------------------------------------------------------------------------

TEMPLATES: dict[str, Callable[[random.Random], Draft]] = {
    "log-level-count": log_levels,
    "access-top": access_top,
    "csv-group-sum": csv_group,
    "jsonl-filter": jsonl_filter,
    "json-inventory": json_inventory,
    "git-find-commit": git_find,
    "make-run": make_run,
    "config-edit": config_edit,
    "permissions": permissions,
    "find-large": find_large,
    "checksum-verify": checksums,
    "csv-join": csv_join,
}
ORDER = sorted(TEMPLATES)
random.Random("terminal/drawn:templates").shuffle(ORDER)


def template_of(seed: int) -> str:
    return ORDER[seed % len(ORDER)]


#: Fewest answer lines a template's task may have (a short answer is too easy to share).
MIN_LINES = {"git-find-commit": 1, "config-edit": 1, "permissions": 1, "json-inventory": 3}


def draft(set_id: str, seed: int) -> Draft:
    template = template_of(seed)
    for attempt in range(50):
        d = TEMPLATES[template](random.Random(f"{set_id}:{seed}:{attempt}"))
        if len(d.expected["answer"].strip().splitlines()) >= MIN_LINES.get(template, 2):
            return d
    raise RuntimeError(f"{set_id}: seed {seed} drew no task with a long enough answer")


def materialize(set_id: str, seed: int, root: Path) -> Path:
    """Write the task of `seed` as `root/<seed>` (its id `<set_id>/<seed>`); return the folder."""
    return write(root, set_id, seed, draft(set_id, seed))


__all__ = ["ORDER", "TEMPLATES", "materialize", "template_of"]
