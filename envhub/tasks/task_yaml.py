"""Reading a task's `task.yaml` (a task folder's or a set's materialised one)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from envhub.errors import TaskFormatError

_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: ~20x faster on a large catalogue


def read_config(cfg_path: Path) -> Any:
    """A `task.yaml`, parsed (not yet checked: `Task.load` does that)."""
    if not cfg_path.is_file():
        raise TaskFormatError(f"{cfg_path}: missing", file=str(cfg_path))
    try:
        return yaml.load(cfg_path.read_text(encoding="utf-8"), Loader=_YAML_LOADER) or {}
    except yaml.YAMLError as e:
        raise TaskFormatError(f"{cfg_path}: not valid YAML: {e}", file=str(cfg_path)) from e
