"""The drawn db task set: one task per seed, each over a database drawn for it.

`materialize(seed, root)` writes the task folder for one seed of a set (`tasks/db/drawn/taskset.yaml`):
the same bytes on every machine, so a set is data (a generator, its version and a seed range)
and the folders are a cache. Seeds come in groups of `GROUP`: a group shares a domain and a
starting database (`db_seed`, one per group, so templates stay few), and its seeds take distinct
intents, so two tasks of a database never ask the same kind of question. Every group draws its
own database, so a template's answers vary from task to task: no constant answers a template,
and a sibling's answer is not this task's.
"""

from __future__ import annotations

import atexit
import random
import shutil
import tempfile
from pathlib import Path

from environments.db import domains as registry
from environments.db.synth import Synth, write_task

GROUP = 8  # seeds that share a domain and a database
ATTEMPTS = 6  # draws of one intent before the seed moves to its next intent


def db_seed(seed: int) -> int:
    """The starting database of a set's seed (distinct from the catalogue's `SEED`)."""
    return 1_000_000 + seed // GROUP


_synth: Synth | None = None


def _shared_synth() -> Synth:
    """One scratch store per process: the 8 seeds of a group draw on one database, built once."""
    global _synth
    if _synth is None:
        scratch = Path(tempfile.mkdtemp(prefix="db-draw-"))
        atexit.register(shutil.rmtree, scratch, True)
        _synth = Synth(scratch)
    return _synth


def materialize(set_id: str, seed: int, root: Path) -> Path:
    """Write the task of `seed` as `root/<seed>` (its id `<set_id>/<seed>`); return the folder."""
    group = seed // GROUP
    domain = registry.get(registry.NAMES[group % len(registry.NAMES)])
    intents = registry.intents(domain.name)
    order = list(range(len(intents)))
    random.Random(f"order:{group}").shuffle(order)
    synth = _shared_synth()
    # Position p of the group tries intents order[p], order[p + GROUP], ...: never another
    # seed's of the same group.
    for index in order[seed % GROUP::GROUP]:
        for attempt in range(ATTEMPTS):
            rng = random.Random(f"{set_id}:{seed}:{index}:{attempt}")
            draft = synth.draft(domain, rng, index, db_seed=db_seed(seed))
            if draft is None:
                continue
            try:
                expected = synth.execute(domain, draft, db_seed(seed))
            except ValueError:
                continue
            return write_task(root, domain, draft, str(seed), expected, db_seed=db_seed(seed),
                              task_id=f"{set_id}/{seed}", proxies=synth.proxies)
    raise RuntimeError(f"{set_id}: seed {seed} drew no task from any of its intents")
