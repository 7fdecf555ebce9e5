"""What a larger catalogue costs a hub: materialising the task sets, loading the catalogue, and a
served hub's start-up time and memory.

    .venv/bin/python benchmarks/catalog_scale.py [--json]

Three figures, each from a fresh process so no cache of this one helps:
- materialise: every set's tasks written into an empty cache (what `make up` does once);
- load: the whole catalogue read from a warm cache (what every hub, command and test does);
- serve: `envhub serve` on a free port until `/ready` answers, and the server's resident memory
  then (all families, the warm cache).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable

LOAD = """
import json, sys, time
from pathlib import Path
from envhub.tasks.catalog import Catalog
started = time.perf_counter()
catalog = Catalog(Path(sys.argv[1]), Path(sys.argv[2]))
tasks = catalog.tasks
print(json.dumps({"seconds": time.perf_counter() - started, "tasks": len(tasks),
                  "in_sets": sum(t.taskset is not None for t in tasks.values()),
                  "sets": {s.id: s.config.seeds for s in catalog.sets.values()}}))
"""


def timed_load(cache: Path) -> dict:
    out = subprocess.run([PY, "-c", LOAD, str(ROOT / "tasks"), str(cache)], check=True, capture_output=True,
                         text=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def serve(cache: Path) -> dict:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "ENVHUB_TASK_SETS_DIR": str(cache), "ENVHUB_AUTH": "off"}
    started = time.perf_counter()
    proc = subprocess.Popen([str(ROOT / ".venv/bin/envhub"), "serve", "--port", str(port)], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/ready", timeout=2) as r:
                    ready = json.loads(r.read())
                    break
            except OSError:
                if proc.poll() is not None or time.perf_counter() - started > 600:
                    raise RuntimeError("the server did not become ready") from None
                time.sleep(0.2)
        return {"seconds_to_ready": time.perf_counter() - started, "rss_mb": rss_mb(proc.pid),
                "tasks": ready.get("tasks")}
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="catalog-scale-") as tmp:
        cache = Path(tmp)
        cold = timed_load(cache)  # materialises every set into the empty cache
        warm = timed_load(cache)
        served = serve(cache)
    result = {"tasks": warm["tasks"], "tasks_in_sets": warm["in_sets"], "sets": warm["sets"],
              "materialise_s": round(cold["seconds"] - warm["seconds"], 2), "load_s": round(warm["seconds"], 2),
              "serve_ready_s": round(served["seconds_to_ready"], 2), "serve_rss_mb": round(served["rss_mb"], 1),
              "cpus": os.cpu_count()}
    if args.json:
        print(json.dumps(result))
        return
    print(f"{result['tasks']} tasks, {result['tasks_in_sets']} of them in sets {result['sets']} ({result['cpus']} CPUs)")
    print(f"materialise every set into an empty cache: {result['materialise_s']:.1f} s")
    print(f"load the catalogue from a warm cache:        {result['load_s']:.2f} s")
    print(f"envhub serve until /ready:                   {result['serve_ready_s']:.1f} s, "
          f"{result['serve_rss_mb']:.0f} MB resident")


if __name__ == "__main__":
    main()
