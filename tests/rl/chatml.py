"""A small torch-free tokenizer with SmolLM2's ChatML template, so rollouts, the codec and the
trainer loop are tested without the `rl` extra (SmolLM2's own tokenizer needs transformers).

Like BPE it has merged pieces on top of single bytes, encoded greedily (longest first), so some id
sequences decode to text that encodes to other ids (the premise of rl.md §6.4 rule 2). No piece
holds a newline, so text splits at newlines as SmolLM2's pre-tokeniser does and a render is the
concatenation of its turns' encodings.
"""

from __future__ import annotations

import re
from typing import Any

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
PIECES = ["hello", " world", "<tool_call>", "</tool_call>", '{"name": "', '"arguments": ', "submit_answer",
          "search_accounts", "answer", "number", "ACC-", "assistant", "system", "user", "tool", " the", "balance"]
_BYTE0 = len(SPECIAL)
_PIECE0 = _BYTE0 + 256
_SPECIAL_RE = re.compile("(" + "|".join(re.escape(s) for s in SPECIAL) + ")")


class ChatMLTokenizer:
    """The slice of a Hugging Face tokenizer that `envhub.rl` uses: `encode`, `decode`,
    `apply_chat_template`, `eos_token_id`, `pad_token_id`."""

    eos_token = "<|im_end|>"

    def __init__(self) -> None:
        self.eos_token_id = SPECIAL.index(self.eos_token)
        self.pad_token_id = SPECIAL.index("<|endoftext|>")
        self._pieces = sorted(((p.encode(), _PIECE0 + i) for i, p in enumerate(PIECES)), key=lambda x: -len(x[0]))
        self._by_id = {i: p for p, i in self._pieces}

    def byte_ids(self, text: str) -> list[int]:
        """`text` one byte per token: it decodes to `text`, and where a piece applies it is not
        what `encode` returns."""
        return [_BYTE0 + b for b in text.encode()]

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        ids: list[int] = []
        for part in _SPECIAL_RE.split(text):
            if part in SPECIAL:
                ids.append(SPECIAL.index(part))
                continue
            raw, i = part.encode(), 0
            while i < len(raw):
                for piece, pid in self._pieces:
                    if raw.startswith(piece, i):
                        ids.append(pid)
                        i += len(piece)
                        break
                else:
                    ids.append(_BYTE0 + raw[i])
                    i += 1
        return ids

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        out, raw = [], b""
        for i in ids:
            if i < _BYTE0:
                out.append(raw.decode(errors="replace"))
                raw = b""
                if not skip_special_tokens:
                    out.append(SPECIAL[i])
            elif i < _PIECE0:
                raw += bytes([i - _BYTE0])
            elif i in self._by_id:
                raw += self._by_id[i]
            else:
                raise ValueError(f"token id {i} is not in the vocabulary")
        out.append(raw.decode(errors="replace"))
        return "".join(out)

    def apply_chat_template(self, messages: list[dict[str, Any]], tokenize: bool = True,
                            add_generation_prompt: bool = False) -> list[int] | str:
        text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
        if add_generation_prompt:
            text += "<|im_start|>assistant\n"
        return self.encode(text) if tokenize else text
