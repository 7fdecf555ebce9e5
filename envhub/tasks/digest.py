"""The content hash of a task's folder, or of any folder: what keys validation records and caches.

A module of its own, below the task model and the task sets, which both hash folders.
"""

from __future__ import annotations

import hashlib
from pathlib import Path


def tree_sha256(root: Path, exclude: set[str] = frozenset()) -> str:  # type: ignore[assignment]
    """A content hash of a folder: relative paths, modes and bytes, in a stable order."""
    h = hashlib.sha256()
    if root.is_file():
        h.update(root.read_bytes())
        return h.hexdigest()
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if rel.split("/", 1)[0] in exclude or "__pycache__" in p.parts:
            continue
        if p.is_symlink():
            h.update(f"L {rel} {p.readlink()}\n".encode())
        elif p.is_file():
            h.update(f"F {rel} {p.stat().st_mode & 0o111:o}\n".encode())
            h.update(p.read_bytes())
        elif p.is_dir():
            h.update(f"D {rel}\n".encode())
    return h.hexdigest()
