"""The episode store: every session's record, written without blocking a step.

    store.py    EpisodeStore: engine + writer + reads
    writer.py   EpisodeWriter: the buffered, retrying EpisodeObserver
    events.py   observer events as plain data (bounded text)
    models.py   ORM rows          schemas.py  views of them
    repo.py     keyword-only reads and idempotent writes
    viewer.py   who may read which episode (owners, admins, the public)
    runs.py     training runs: their step reports and the figures computed from their episodes
    stats.py    latency percentiles   metrics.py  Prometheus metrics
"""

from envhub.store.schemas import EpisodeDetail, EpisodeSummary, LatencySummary
from envhub.store.store import EpisodeStore
from envhub.store.viewer import OPERATOR, PUBLIC, Viewer
from envhub.store.writer import EpisodeWriter

__all__ = ["OPERATOR", "PUBLIC", "EpisodeDetail", "EpisodeStore", "EpisodeSummary", "EpisodeWriter", "LatencySummary",
           "Viewer"]
