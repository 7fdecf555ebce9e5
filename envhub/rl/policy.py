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

from envhub.rl.prefix import forward_shared, plan_prefixes


@dataclass
class Generation:
    token_ids: list[int]
    logprobs: list[float]
    policy_version: int
    finish_reason: str  # "stop" (ended with EOS/stop) or "length"


class Policy(Protocol):
    version: int
    engine: str

    async def generate(self, prompt_ids: list[int], max_tokens: int, seed: int | None = None) -> Generation:
        """Sample up to `max_tokens` after `prompt_ids`. With a `seed`, what is sampled depends on the
        seed, the prompt and the weights only (not on other requests served alongside)."""
        ...


@dataclass
class _Request:
    prompt: list[int]
    max_tokens: int
    seed: int | None
    fut: asyncio.Future[Generation]


class HFPolicy:
    """A `transformers` causal LM. Sampling at `temperature` (logprobs are of the tempered
    distribution, the one the trainer optimises); `push(state_dict, version)` installs new weights.

    Concurrent requests are decoded together by a small loop of its own: each group of rows that
    shares a prompt prefix (a GRPO group) has it prefilled once (`envhub.rl.prefix`), rows leave the
    batch when they finish, and each request samples from its own `torch.Generator`, so a seeded
    request draws the same tokens alone or batched with others (up to float rounding of the batched
    matmuls)."""

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
        self._queue: asyncio.Queue[_Request] | None = None
        self._worker: asyncio.Task[None] | None = None
        self._weights_lock = threading.Lock()
        self.generated_tokens = 0

    def push(self, state_dict: dict[str, Any], version: int) -> None:
        """New weights from the learner; requests already sampling finish on the old ones."""
        with self._weights_lock:
            self.model.load_state_dict(state_dict)
            self.version = version

    async def generate(self, prompt_ids: list[int], max_tokens: int, seed: int | None = None) -> Generation:
        if self._queue is None or self._worker is None or self._worker.done():
            self._queue = asyncio.Queue()
            self._worker = asyncio.create_task(self._serve())
        fut: asyncio.Future[Generation] = asyncio.get_running_loop().create_future()
        await self._queue.put(_Request(list(prompt_ids), max_tokens, seed, fut))
        return await fut

    async def _serve(self) -> None:
        assert self._queue is not None
        while True:
            batch = [await self._queue.get()]
            await asyncio.sleep(0.01)  # let the rest of a group arrive
            while not self._queue.empty() and len(batch) < self.max_batch:
                batch.append(self._queue.get_nowait())
            try:
                outs = await asyncio.to_thread(self._generate_batch, [(r.prompt, r.max_tokens, r.seed) for r in batch])
                for r, out in zip(batch, outs, strict=True):
                    if not r.fut.done():
                        r.fut.set_result(out)
            except BaseException as e:  # hand the fault to every waiter, keep serving
                for r in batch:
                    if not r.fut.done():
                        r.fut.set_exception(e)
                if isinstance(e, asyncio.CancelledError):
                    raise

    def _generate_batch(self, reqs: list[tuple[list[int], int, int | None]]) -> list[Generation]:
        import torch

        with self._weights_lock, torch.no_grad():
            version = self.version
            dev = next(self.model.parameters()).device
            toks: list[list[int]] = [[] for _ in reqs]
            lps: list[list[float]] = [[] for _ in reqs]
            active = [i for i, (p, cap, _) in enumerate(reqs) if cap > 0 and p]
            gens = {i: self._sampler(reqs[i][2], dev) for i in active}
            if active:
                self._decode([reqs[i][0] for i in active], active, reqs, gens, toks, lps, dev)
        out = []
        for i in range(len(reqs)):
            stop = bool(toks[i]) and toks[i][-1] == self.eos_id
            self.generated_tokens += len(toks[i])
            out.append(Generation(toks[i], lps[i], version, "stop" if stop else "length"))
        return out

    @staticmethod
    def _sampler(seed: int | None, dev: Any) -> Any:
        import torch

        if seed is None:  # unseeded: drawn from torch's global generator (torch.manual_seed still rules)
            seed = int(torch.randint(0, 2**62, (1,)))
        g = torch.Generator(device=dev)
        g.manual_seed(seed % 2**63)
        return g

    def _decode(self, prompts: list[list[int]], active: list[int], reqs: list[tuple[list[int], int, int | None]],
                gens: dict[int, Any], toks: list[list[int]], lps: list[list[float]], dev: Any) -> None:
        import torch

        f = forward_shared(self.model, prompts, plan_prefixes(prompts, list(range(len(prompts)))), self.pad_id, dev)
        logits = self.model.get_output_embeddings()(f.hidden[:, -1])
        past, mask, nxt_pos = f.past, f.mask, f.next_pos
        active = [active[r] for r in f.order]
        while True:
            logp = torch.log_softmax(logits.float() / self.temperature, dim=-1)
            keep, feed = [], []
            for row, i in enumerate(active):
                tok = int(torch.multinomial(logp[row].exp(), 1, generator=gens[i]))
                toks[i].append(tok)
                lps[i].append(float(logp[row, tok]))
                if tok != self.eos_id and len(toks[i]) < reqs[i][1]:
                    keep.append(row)
                    feed.append(tok)
            if not keep:
                return
            if len(keep) < len(active):  # finished rows leave the batch (and the cache)
                idx = torch.tensor(keep, device=dev)
                past.batch_select_indices(idx)
                mask, nxt_pos = mask[idx], nxt_pos[idx]
                active = [active[row] for row in keep]
            mask = torch.cat([mask, torch.ones_like(mask[:, :1])], dim=1)
            out = self.model(input_ids=torch.tensor(feed, device=dev).unsqueeze(1), attention_mask=mask,
                             position_ids=nxt_pos.unsqueeze(1), past_key_values=past, use_cache=True)
            past, logits, nxt_pos = out.past_key_values, out.logits[:, -1], nxt_pos + 1


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

    async def generate(self, prompt_ids: list[int], max_tokens: int, seed: int | None = None) -> Generation:
        if self._http is None:
            self._http = aiohttp.ClientSession(timeout=self._timeout, headers=self._headers)
        version = self.version
        body = {"model": self.model, "prompt": list(prompt_ids), "max_tokens": max_tokens,
                "temperature": self.temperature, "logprobs": 0, "return_token_ids": True,
                "skip_special_tokens": False}
        if seed is not None:  # vLLM and SGLang take a per-request sampling seed
            body["seed"] = seed % 2**63
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
