"""What every language's forger needs: the library's own files, and text appended to them."""

from __future__ import annotations

from pathlib import Path

from environments.swe.controls import _sources as sources
from verifiers.swe import SweConfig

__all__ = ["append", "node_sources", "sources"]


def append(paths: list[Path], text: str) -> bool:
    """`text` appended to each of `paths`; whether there was any."""
    for p in paths:
        p.write_text(p.read_text() + text)
    return bool(paths)


def node_sources(repo: Path, cfg: SweConfig) -> list[Path]:
    """CommonJS library files (ES modules have no `module` to wrap; none of the tasks has one)."""
    if cfg.language == "typescript":
        return [p for p in sources(repo, cfg, (".ts",)) if not p.name.endswith(".d.ts")]
    return sources(repo, cfg, (".js", ".cjs"))
