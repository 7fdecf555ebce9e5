"""Combined-format web access logs for `top-ips` and `http-status-summary`."""
import collections
import hashlib
import json

from common import fresh_state, rng, task_dir

PATHS = ["/", "/login", "/api/items", "/api/items/42", "/static/app.js", "/favicon.ico", "/admin"]
AGENTS = ["curl/8.5.0", "Mozilla/5.0 (X11; Linux x86_64)", "python-requests/2.31"]


def access_log(name: str, n: int) -> tuple[str, list[tuple[str, int]]]:
    r = rng(name)
    ips = [f"10.{r.randint(0, 3)}.{r.randint(0, 9)}.{r.randint(1, 254)}" for _ in range(40)]
    weights = [r.randint(1, 30) for _ in ips]
    rows, lines = [], []
    for i in range(n):
        ip = r.choices(ips, weights)[0]
        status = r.choices([200, 301, 304, 404, 500, 503], [60, 5, 10, 15, 6, 4])[0]
        t = f"10/Mar/2024:{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d} +0000"
        lines.append(f'{ip} - - [{t}] "GET {r.choice(PATHS)} HTTP/1.1" {status} {r.randint(0, 9000)} '
                     f'"-" "{r.choice(AGENTS)}"')
        rows.append((ip, status))
    return "\n".join(lines) + "\n", rows


for name in ("top-ips", "http-status-summary"):
    state = fresh_state(name)
    text, rows = access_log(name, 4000)
    (state / "access.log").write_text(text)
    sha = hashlib.sha256(text.encode()).hexdigest()
    if name == "top-ips":
        counts = collections.Counter(ip for ip, _ in rows)
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
        expected = {"lines": [f"{c} {ip}" for ip, c in ranked], "log_sha256": sha}
    else:
        counts = collections.Counter(s for _, s in rows)
        expected = {"rows": [[s, counts[s]] for s in sorted(counts)], "log_sha256": sha}
    (task_dir(name) / "tests" / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
