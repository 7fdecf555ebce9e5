"""A zip holding a file split into parts, with a decoy part that must not be merged."""
import hashlib
import io
import json
import zipfile

from common import fresh_state, rng, task_dir

NAME = "unzip-merge"
r = rng(NAME)
state = fresh_state(NAME)
payload = bytes(r.randrange(256) for _ in range(40_000))
parts = [payload[i:i + 10_000] for i in range(0, len(payload), 10_000)]
buf = io.BytesIO()
with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
    # stored out of order, so listing order is not merge order
    for idx in (2, 0, 3, 1):
        z.writestr(zipfile.ZipInfo(f"parts/dataset.bin.part{idx + 1:02d}", (2024, 3, 10, 12, 0, 0)), parts[idx])
    z.writestr(zipfile.ZipInfo("parts/dataset.bin.part02.orig", (2024, 3, 10, 12, 0, 0)), b"stale\n" * 100)
    z.writestr(zipfile.ZipInfo("parts/README", (2024, 3, 10, 12, 0, 0)),
               "Concatenate dataset.bin.partNN in numeric order. dataset.bin.sha256 has the checksum.\n")
    z.writestr(zipfile.ZipInfo("parts/dataset.bin.sha256", (2024, 3, 10, 12, 0, 0)),
               hashlib.sha256(payload).hexdigest() + "  dataset.bin\n")
(state / "incoming").mkdir()
(state / "incoming" / "delivery.zip").write_bytes(buf.getvalue())
(task_dir(NAME) / "tests" / "expected.json").write_text(json.dumps({"sha256": hashlib.sha256(payload).hexdigest(),
                                                                    "size": len(payload)}) + "\n")
