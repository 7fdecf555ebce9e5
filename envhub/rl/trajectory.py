"""The trajectory record (rl.md §6.2): token-exact, one JSON object per episode.

Tokens are kept as the engine produced them (never re-tokenised); four parallel lists of equal
length say, per token, whether the policy sampled it (`loss_mask`), its generation-time logprob
and the policy version that sampled it (-1 for tokens the codec or the environment inserted).

Failure classes are the server's (`envhub.errors.FailureClass`): `env_error`, `verifier_error`,
`task_invalid` and `unavailable` are not trainable — their reward is `None`, never 0.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from envhub.errors import FailureClass

SCHEMA_VERSION = 1
#: How an episode ended: the policy stopped (a final tool), its turn hit the engine's length, the
#: rollout's turn or token budget ran out, the environment ended it (`env_done`: a terminal state) or
#: cut it off (`truncated`: the task's step or time budget, not a terminal state), or a fault.
FINISH_REASONS = ("stop", "length", "max_turns", "env_done", "truncated", "budget", "error")


@dataclass
class Turn:
    role: str  # "assistant" (sampled) or "observation" (codec/env tokens)
    start: int
    end: int
    tool: str | None = None
    failure: str = "ok"


@dataclass
class Trajectory:
    task_id: str
    env: str
    group_id: str = ""
    trajectory_id: str = field(default_factory=lambda: uuid.uuid4().hex[:16])
    repeat_index: int = 0
    duplicate_of: str | None = None
    episode_seed: int | None = None
    # tokens: all four lists have one entry per token
    token_ids: list[int] = field(default_factory=list)
    loss_mask: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    policy_version: list[int] = field(default_factory=list)
    prompt_len: int = 0
    turns: list[Turn] = field(default_factory=list)
    # outcome
    reward: float | None = None
    passed: bool | None = None
    checks: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str = "stop"
    failure_class: str = FailureClass.ok.value
    failure_detail: str = ""
    #: an untrainable ending that may not recur on a re-run (the server's word; a 4xx request error or
    #: task_invalid: False)
    retryable: bool = False
    #: classes of the earlier attempts of this rollout that failed and were re-run (each masked)
    retried_failures: list[str] = field(default_factory=list)
    #: whether the verdict flipped when the hub judged the final state again (a sampled episode,
    #: `RolloutConfig.reverify_rate`); None when it was not judged twice
    reverify_flipped: bool | None = None
    #: the turn this trajectory branched at from its group's shared prefix (`rollout_group(branch_at=...)`)
    branch_at: int | None = None
    # provenance
    engine: str = ""
    sampling: dict[str, Any] = field(default_factory=dict)
    num_turns: int = 0
    num_tool_errors: int = 0
    drift_events: int = 0
    gen_s: float = 0.0
    env_s: float = 0.0
    enqueue_seq: int = -1
    advantage: float = 0.0
    schema_version: int = SCHEMA_VERSION

    # -- building -------------------------------------------------------------------------------
    def add_prompt(self, ids: list[int]) -> None:
        self._extend(ids, sampled=False)
        self.prompt_len = len(self.token_ids)

    def add_sampled(self, ids: list[int], logprobs: list[float], version: int, tool: str | None = None,
                    failure: str = "ok") -> None:
        if len(ids) != len(logprobs):
            raise ValueError(f"{len(ids)} token ids but {len(logprobs)} logprobs")
        start = len(self.token_ids)
        self.token_ids += ids
        self.loss_mask += [1] * len(ids)
        self.logprobs += [float(x) for x in logprobs]
        self.policy_version += [int(version)] * len(ids)
        self.turns.append(Turn("assistant", start, len(self.token_ids), tool, failure))

    def add_observation(self, ids: list[int]) -> None:
        start = len(self.token_ids)
        self._extend(ids, sampled=False)
        self.turns.append(Turn("observation", start, len(self.token_ids)))

    def _extend(self, ids: list[int], sampled: bool) -> None:
        self.token_ids += ids
        self.loss_mask += [0] * len(ids)
        self.logprobs += [0.0] * len(ids)
        self.policy_version += [-1] * len(ids)

    # -- reading --------------------------------------------------------------------------------
    @property
    def trainable(self) -> bool:
        return FailureClass(self.failure_class).trainable

    @property
    def n_sampled(self) -> int:
        return sum(self.loss_mask)

    def sampled_versions(self) -> list[int]:
        return [v for v, m in zip(self.policy_version, self.loss_mask, strict=True) if m]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trajectory:
        known = {f.name for f in fields(cls)}
        data = {k: v for k, v in data.items() if k in known}
        data["turns"] = [Turn(**t) for t in data.get("turns", [])]
        return cls(**data)


def write_jsonl(trajectories: Iterable[Trajectory], path: str | Path) -> int:
    n = 0
    with open(path, "a", encoding="utf-8") as f:
        for t in trajectories:
            f.write(json.dumps(t.to_dict(), ensure_ascii=False) + "\n")
            n += 1
    return n


def read_jsonl(path: str | Path) -> Iterator[Trajectory]:
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield Trajectory.from_dict(json.loads(line))
