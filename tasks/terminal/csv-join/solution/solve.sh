cd /workspace
python3 - <<'PY'
import csv
from decimal import Decimal
tot = {}
with open("orders.csv", newline="") as f:
    for row in csv.DictReader(f):
        tot[row["customer_id"]] = tot.get(row["customer_id"], Decimal(0)) + Decimal(row["amount"])
with open("customers.csv", newline="") as f:
    rows = [(c["customer_id"], c["name"], tot.get(c["customer_id"], Decimal(0))) for c in csv.DictReader(f)]
rows.sort(key=lambda r: (-r[2], int(r[0])))
with open("totals.csv", "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["customer_id", "name", "total"])
    for cid, name, t in rows:
        w.writerow([cid, name, f"{t:.2f}"])
PY
