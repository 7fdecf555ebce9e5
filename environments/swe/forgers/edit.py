"""What every language's forger needs: the library's own files, and text appended to them."""

from __future__ import annotations

import re
from pathlib import Path

from environments.swe.controls import _sources as sources
from verifiers.swe import SweConfig

__all__ = ["append", "insert_before_data", "node_sources", "sources"]


def append(paths: list[Path], text: str) -> bool:
    """`text` appended to each of `paths`; whether there was any."""
    for p in paths:
        p.write_text(p.read_text() + text)
    return bool(paths)


def insert_before_data(path: Path, text: str, end: re.Pattern[str]) -> None:
    """`text` as code of `path`: before the marker that ends its code (`end`: Perl's `__END__` or
    `__DATA__`, Ruby's `__END__`; what follows is data), else at its end."""
    src = path.read_text()
    m = end.search(src)
    path.write_text(src[:m.start()] + text.lstrip("\n") + "\n" + src[m.start():] if m else src + text)


def node_sources(repo: Path, cfg: SweConfig) -> list[Path]:
    """CommonJS library files (ES modules have no `module` to wrap; none of the tasks has one)."""
    if cfg.language == "typescript":
        return [p for p in sources(repo, cfg, (".ts",)) if not p.name.endswith(".d.ts")]
    return sources(repo, cfg, (".js", ".cjs"))
