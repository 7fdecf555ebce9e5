"""CSV / JSON / SQLite data for the data-wrangling tasks, with their expected answers."""
import collections
import csv
import io
import json
import sqlite3
from decimal import Decimal

from common import fresh_state, rng, task_dir

FIRST = ["Ana", "Ben", "Chloé", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lena", "Milo", "Nia"]
LAST = ["Silva", "Okafor", "Müller", "Smith", "O'Brien", "Tanaka", "Novak", "Rossi"]


def expected(name, obj):
    (task_dir(name) / "tests" / "expected.json").write_text(json.dumps(obj, indent=1, ensure_ascii=False) + "\n")


# -- csv-join ----------------------------------------------------------------------------------
r = rng("csv-join")
state = fresh_state("csv-join")
customers = [(100 + i, f"{r.choice(FIRST)} {r.choice(LAST)}") for i in range(25)]
with open(state / "customers.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["customer_id", "name", "country"])
    for cid, name in customers:
        w.writerow([cid, name, r.choice(["PT", "DE", "JP", "US"])])
totals = collections.defaultdict(Decimal)
with open(state / "orders.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["order_id", "customer_id", "amount"])
    for oid in range(1, 301):
        cid = r.choice(customers[:20])[0]  # five customers never order
        amount = Decimal(r.randint(100, 50000)) / 100
        totals[cid] += amount
        w.writerow([oid, cid, f"{amount:.2f}"])
names = dict(customers)
rows = sorted(([cid, names[cid], f"{totals.get(cid, Decimal(0)):.2f}"] for cid, _ in customers),
              key=lambda row: (-Decimal(row[2]), row[0]))
expected("csv-join", [[str(a), b, c] for a, b, c in rows])

# -- jq-admins ---------------------------------------------------------------------------------
r = rng("jq-admins")
state = fresh_state("jq-admins")
users = []
for i in range(60):
    first = r.choice(FIRST).lower().replace("é", "e")
    users.append({"id": i + 1, "email": f"{first}.{i}@example.org", "active": r.random() < 0.7,
                  "roles": r.sample(["admin", "editor", "viewer", "billing"], r.randint(0, 2)),
                  "profile": {"team": r.choice(["core", "web", "ops"])}})
(state / "users.json").write_text(json.dumps({"generated": "2024-03-10", "users": users}, indent=2) + "\n")
expected("jq-admins", sorted(u["email"] for u in users if u["active"] and "admin" in u["roles"]
                             and u["profile"]["team"] == "ops"))

# -- jsonl-summary -----------------------------------------------------------------------------
r = rng("jsonl-summary")
state = fresh_state("jsonl-summary")
lines, by_type, users_seen, bytes_by_user = [], collections.Counter(), set(), collections.Counter()
for i in range(2500):
    ev = {"ts": 1710000000 + i * 7, "type": r.choice(["click", "view", "view", "purchase", "signup"]),
          "user": f"u{r.randint(1, 180):03d}"}
    if r.random() < 0.5:
        ev["bytes"] = r.randint(1, 5000)
    lines.append(json.dumps(ev))
    by_type[ev["type"]] += 1
    users_seen.add(ev["user"])
    bytes_by_user[ev["user"]] += ev.get("bytes", 0)
lines.insert(700, "")
lines.insert(1500, "   ")
(state / "events.jsonl").write_text("\n".join(lines) + "\n")
expected("jsonl-summary", {"total": 2500, "by_type": dict(sorted(by_type.items())), "unique_users": len(users_seen),
                           "top_user_by_bytes": max(sorted(bytes_by_user), key=lambda u: bytes_by_user[u])})

# -- dedupe-emails -----------------------------------------------------------------------------
r = rng("dedupe-emails")
state = fresh_state("dedupe-emails")
base = [f"{r.choice(FIRST).lower().replace('é', 'e')}{r.randint(1, 99)}@{r.choice(['example.com', 'mail.org'])}"
        for _ in range(120)]
raw = []
for e in base + r.sample(base, 60):
    v = r.choice([e, e.upper(), e.capitalize(), f"  {e}", f"{e}\t", e])
    raw.append(v)
r.shuffle(raw)
raw.insert(10, "")
(state / "signups.txt").write_text("\n".join(raw) + "\n")
expected("dedupe-emails", sorted({e.strip().lower() for e in raw if e.strip()}))

# -- split-by-region ---------------------------------------------------------------------------
r = rng("split-by-region")
state = fresh_state("split-by-region")
out = io.StringIO()
w = csv.writer(out, lineterminator="\n")
w.writerow(["date", "region", "product", "units"])
per = collections.defaultdict(list)
for i in range(400):
    row = [f"2024-03-{1 + i % 28:02d}", r.choice(["north", "south", "east", "west", "central"]),
           r.choice(["widget", "gadget", "gizmo"]), str(r.randint(1, 40))]
    w.writerow(row)
    per[row[1]].append(row)
(state / "sales.csv").write_text(out.getvalue())
expected("split-by-region", per)

# -- sqlite-report -----------------------------------------------------------------------------
r = rng("sqlite-report")
state = fresh_state("sqlite-report")
db = sqlite3.connect(state / "shop.db")
db.executescript("""
CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL);
CREATE TABLE sales(id INTEGER PRIMARY KEY, product_id INTEGER REFERENCES products(id), qty INTEGER,
                   unit_price_cents INTEGER, sold_on TEXT, refunded INTEGER DEFAULT 0);
""")
prods = [(i + 1, f"{r.choice(['Blue', 'Red', 'Tiny', 'Mega', 'Eco'])} {r.choice(['Lamp', 'Mug', 'Desk', 'Pen'])} {i + 1}",
          r.choice(["home", "office"])) for i in range(30)]
db.executemany("INSERT INTO products VALUES (?,?,?)", prods)
rev = collections.Counter()
for i in range(1500):
    pid, qty, price = r.randint(1, 30), r.randint(1, 5), r.randint(199, 9999)
    month = r.choice(["2024-01", "2024-02", "2024-03"])
    refunded = int(r.random() < 0.1)
    db.execute("INSERT INTO sales(product_id, qty, unit_price_cents, sold_on, refunded) VALUES (?,?,?,?,?)",
               (pid, qty, price, f"{month}-{r.randint(1, 28):02d}", refunded))
    if month == "2024-02" and not refunded:
        rev[pid] += qty * price
db.commit()
db.execute("VACUUM")
db.close()
names = {p[0]: p[1] for p in prods}
top = sorted(rev.items(), key=lambda kv: (-kv[1], names[kv[0]]))[:5]
expected("sqlite-report", [[names[pid], f"{cents // 100}.{cents % 100:02d}"] for pid, cents in top])
import hashlib  # noqa: E402
(task_dir("sqlite-report") / "tests" / "db.sha256").write_text(
    hashlib.sha256((state / "shop.db").read_bytes()).hexdigest() + "\n")
