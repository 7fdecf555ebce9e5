#!/usr/bin/env bash
# The ray extra (envhub.ray, tests/ray, benchmarks/ray_pool.py, docker/ray): Ray core, pinned.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/pip install -q --disable-pip-version-check -e '.[test,ray]'
