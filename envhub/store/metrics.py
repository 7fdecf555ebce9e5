"""Prometheus metrics of the episode store (served with the server's own at /metrics)."""

from prometheus_client import Counter, Gauge

PENDING = Gauge("envhub_store_pending", "Episode events buffered, not yet written to the store")
WRITE_ERRORS = Counter("envhub_store_write_errors_total", "Failed batch writes to the episode store")
DROPPED = Counter("envhub_store_dropped_total", "Episode events lost: buffer overflow or unwritable data")
WRITTEN = Counter("envhub_store_written_total", "Episode events written to the store")
