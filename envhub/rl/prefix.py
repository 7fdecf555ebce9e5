"""Forward passes that compute a shared prefix once. A GRPO group's members share their task's
prompt (the chat template, the tools, the question: hundreds of tokens): decoding them together
(`HFPolicy`) or scoring their sampled tokens for the loss (`GRPOLearner`) needs that prefix
forwarded once, not once per member; on CPU that is most of the cost.

The prefix of a group is forwarded at batch size 1 and its KV cache expanded to the group's rows
(autograd sums the rows' gradients back through the expansion). Each row's own tokens follow,
right-aligned: padding sits between a row's shared part and the rest, masked, and the positions
skip it, so every row sees exactly its own sequence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def common_prefix(seqs: list[list[int]]) -> int:
    n = min(len(s) for s in seqs)
    first = seqs[0]
    for i in range(n):
        if any(s[i] != first[i] for s in seqs):
            return i
    return n


def plan_prefixes(seqs: list[list[int]], rows: list[int]) -> list[tuple[list[int], int]]:
    """Groups of rows and the prefix each group shares (computed once): the rows split by their token
    after the common prefix, recursively, while splitting saves forwarded tokens (a GRPO group's
    members share their task's prompt; groups of different tasks share only the template's start).
    Every row keeps at least one token past its shared part: its output starts the next step."""
    mine = [seqs[r] for r in rows]
    n = min(common_prefix(mine), min(len(s) for s in mine) - 1)
    by_next: dict[int, list[int]] = {}
    for r in rows:  # a row with nothing past its next token cannot share more: it goes alone
        by_next.setdefault(seqs[r][n] if len(seqs[r]) > n + 1 else -1 - r, []).append(r)
    if len(by_next) == 1:
        return [(rows, n)]
    split = [g for sub in by_next.values() for g in plan_prefixes(seqs, sub)]
    # forwarded tokens: each group's prefix once, then every row's own rest
    if sum((len(g) - 1) * m for g, m in split) > (len(rows) - 1) * n:
        return split
    return [(rows, n)]


@dataclass
class SharedForward:
    order: list[int]  # the input row of each batch row
    shared: list[int]  # per input row: how many of its first tokens came from its group's prefix
    hidden: Any  # (batch, width, d): last hidden state of each row's own tokens, right-aligned
    past: Any  # the KV cache: shared prefixes (left-padded) then the rows' own tokens
    mask: Any  # the attention mask over the cache
    next_pos: Any  # (batch,): each row's next position
    width: int  # columns of `hidden`

    def column(self, index: int, length: int) -> int:
        """The column of `hidden` that holds token `index` of an input row of `length` tokens (not
        one of its shared tokens)."""
        return self.width - length + index


def forward_shared(model: Any, seqs: list[list[int]], plan: list[tuple[list[int], int]], pad_id: int,
                   dev: Any) -> SharedForward:
    """Forward `seqs` through the model's decoder, each group of `plan` sharing its prefix."""
    import torch
    from transformers import DynamicCache

    decoder = model.get_decoder()
    shared = [0] * len(seqs)
    parts: list[tuple[list[int], list[list[Any]] | None]] = []  # (rows, per layer [k, v] of their prefix)
    for rows, n in plan:
        kv = None
        if n > 0:
            cache = decoder(input_ids=torch.tensor([seqs[rows[0]][:n]], device=dev), use_cache=True).past_key_values
            kv = [[layer.keys, layer.values] for layer in cache.layers]
        for r in rows:
            shared[r] = n
        parts.append((rows, kv))
    width_s = max(shared)
    past = None
    if width_s > 0:
        like = next(kv for _, kv in parts if kv is not None)
        layers = []
        for li in range(len(like)):
            ks, vs = [], []
            for rows, kv in parts:
                for j, dst in ((0, ks), (1, vs)):
                    t = kv[li][j] if kv is not None else like[li][j][:, :, :0]
                    t = torch.nn.functional.pad(t, (0, 0, width_s - t.shape[2], 0))  # left-pad the sequence
                    dst.append(t.expand(len(rows), -1, -1, -1))
            layers.append((torch.cat(ks), torch.cat(vs)))
        past = DynamicCache(ddp_cache_data=layers)
    order = [r for rows, _ in parts for r in rows]
    rest = [seqs[r][shared[r]:] for r in order]
    width = max(len(x) for x in rest)
    ids = torch.tensor([[pad_id] * (width - len(x)) + x for x in rest], device=dev)
    mask = torch.tensor([[0] * (width_s - shared[r]) + [1] * shared[r] + [0] * (width - len(x)) + [1] * len(x)
                         for r, x in zip(order, rest, strict=True)], device=dev)
    pos = torch.tensor([[0] * (width - len(x)) + list(range(shared[r], shared[r] + len(x)))
                        for r, x in zip(order, rest, strict=True)], device=dev)
    out = decoder(input_ids=ids, attention_mask=mask, position_ids=pos, past_key_values=past, use_cache=True)
    return SharedForward(order, shared, out.last_hidden_state, out.past_key_values, mask, pos[:, -1] + 1, width)
