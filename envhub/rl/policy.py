"""Policy backends, token in / token out: prompt ids → sampled ids, their generation-time logprobs,
the policy version that sampled them and why sampling stopped. Text is never re-tokenised.

- `HFPolicy`: an in-process `transformers` model (CPU tests, the GPU demo); concurrent requests are
  batched (left-padded) so a GRPO group generates together.
- `OpenAICompletionsPolicy`: an OpenAI-compatible `/v1/completions` server that takes token prompts
  and returns token ids and logprobs (vLLM with `return_token_ids`, SGLang).
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import Any, Protocol

import aiohttp


@dataclass
class Generation:
    token_ids: list[int]
    logprobs: list[float]
    policy_version: int
    finish_reason: str  # "stop" (ended with EOS/stop) or "length"


class Policy(Protocol):
    version: int
    engine: str

    async def generate(self, prompt_ids: list[int], max_tokens: int) -> Generation: ...


class HFPolicy:
    """A `transformers` causal LM. Sampling at `temperature` (logprobs are of the tempered
    distribution, the one the trainer optimises); `push(state_dict, version)` installs new weights."""

    engine = "hf"

    def __init__(self, model: Any, tokenizer: Any, *, temperature: float = 1.0, max_batch: int = 16,
                 version: int = 0) -> None:
        self.model = model.eval()
        self.tok = tokenizer
        self.temperature = temperature
        self.max_batch = max_batch
        self.version = version
        self.eos_id = tokenizer.eos_token_id
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.eos_id
        self._queue: asyncio.Queue[tuple[list[int], int, asyncio.Future[Generation]]] | None = None
        self._worker: asyncio.Task[None] | None = None
        self._weights_lock = threading.Lock()
        self.generated_tokens = 0

    def push(self, state_dict: dict[str, Any], version: int) -> None:
        """New weights from the learner; requests already sampling finish on the old ones."""
        with self._weights_lock:
            self.model.load_state_dict(state_dict)
            self.version = version

    async def generate(self, prompt_ids: list[int], max_tokens: int) -> Generation:
        if self._queue is None or self._worker is None or self._worker.done():
            self._queue = asyncio.Queue()
            self._worker = asyncio.create_task(self._serve())
        fut: asyncio.Future[Generation] = asyncio.get_running_loop().create_future()
        await self._queue.put((list(prompt_ids), max_tokens, fut))
        return await fut

    async def _serve(self) -> None:
        assert self._queue is not None
        while True:
            batch = [await self._queue.get()]
            await asyncio.sleep(0.01)  # let the rest of a group arrive
            while not self._queue.empty() and len(batch) < self.max_batch:
                batch.append(self._queue.get_nowait())
            try:
                outs = await asyncio.to_thread(self._generate_batch, [(p, m) for p, m, _ in batch])
                for (_, _, fut), out in zip(batch, outs, strict=True):
                    if not fut.done():
                        fut.set_result(out)
            except BaseException as e:  # hand the fault to every waiter, keep serving
                for _, _, fut in batch:
                    if not fut.done():
                        fut.set_exception(e)
                if isinstance(e, asyncio.CancelledError):
                    raise

    def _generate_batch(self, reqs: list[tuple[list[int], int]]) -> list[Generation]:
        import torch

        with self._weights_lock, torch.no_grad():
            version = self.version
            width = max(len(p) for p, _ in reqs)
            max_new = max(m for _, m in reqs)
            dev = next(self.model.parameters()).device
            ids = torch.tensor([[self.pad_id] * (width - len(p)) + p for p, _ in reqs], device=dev)
            mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p, _ in reqs], device=dev)
            out = self.model.generate(
                input_ids=ids, attention_mask=mask, max_new_tokens=max_new, do_sample=True,
                temperature=self.temperature, top_k=0, top_p=1.0, output_logits=True,
                return_dict_in_generate=True, pad_token_id=self.pad_id, eos_token_id=self.eos_id)
            new = out.sequences[:, width:]
            logits = torch.stack(out.logits, dim=1).float() / self.temperature
            lps = torch.log_softmax(logits, dim=-1).gather(-1, new.unsqueeze(-1)).squeeze(-1)
        gens = []
        for row, (_, cap) in enumerate(reqs):
            toks, lp = new[row].tolist()[:cap], lps[row].tolist()[:cap]
            finish = "length"
            if self.eos_id in toks:
                cut = toks.index(self.eos_id) + 1
                toks, lp, finish = toks[:cut], lp[:cut], "stop"
            self.generated_tokens += len(toks)
            gens.append(Generation(toks, lp, version, finish))
        return gens


class OpenAICompletionsPolicy:
    """An OpenAI-compatible completions server given token ids: vLLM (`return_token_ids`) or SGLang.
    `version` is what the caller last pushed to that server (the server does not report it)."""

    engine = "openai"

    def __init__(self, base_url: str, model: str, *, temperature: float = 1.0, version: int = 0,
                 timeout_s: float = 600, api_key: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.temperature = temperature
        self.version = version
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http: aiohttp.ClientSession | None = None

    async def generate(self, prompt_ids: list[int], max_tokens: int) -> Generation:
        if self._http is None:
            self._http = aiohttp.ClientSession(timeout=self._timeout, headers=self._headers)
        version = self.version
        body = {"model": self.model, "prompt": list(prompt_ids), "max_tokens": max_tokens,
                "temperature": self.temperature, "logprobs": 0, "return_token_ids": True,
                "skip_special_tokens": False}
        async with self._http.post(self.base_url + "/v1/completions", json=body) as r:
            if r.status >= 400:
                raise RuntimeError(f"completions server answered {r.status}: {(await r.text())[:300]}")
            data = await r.json(content_type=None)
        return self.parse(data, version)

    @staticmethod
    def parse(data: dict[str, Any], version: int) -> Generation:
        choice = data["choices"][0]
        ids = choice.get("token_ids")
        if ids is None:
            raise RuntimeError("the server returned no token ids (vLLM needs return_token_ids; text is "
                               "never re-tokenised here)")
        lps = (choice.get("logprobs") or {}).get("token_logprobs")
        if lps is None or len(lps) != len(ids):
            raise RuntimeError("the server returned no per-token logprobs for the sampled ids")
        finish = "length" if choice.get("finish_reason") == "length" else "stop"
        return Generation(list(ids), [float(x) for x in lps], version, finish)

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.close()
            self._http = None
