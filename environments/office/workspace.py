"""The session's document folder on the host, and the only way tools reach a path in it.

Paths are relative to the workspace. Absolute paths, `..`, hidden components (`.envhub/` is where
export writes recalculated copies) and symlinks anywhere on the way are refused, so an agent can
neither read the host nor plant files the verifier would trust.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from envhub.errors import AgentError

MAX_FILES = 500


class Workspace:
    def __init__(self, root: Path) -> None:
        self.root = root

    def reset_from(self, template: Path | None) -> None:
        if self.root.exists():
            shutil.rmtree(self.root)
        if template is not None and template.is_dir():
            shutil.copytree(template, self.root, symlinks=False)
        else:
            self.root.mkdir(parents=True)

    def path(self, rel: object, *, must_exist: bool = False) -> Path:
        """Resolve an agent-given relative path, refusing anything that could leave the workspace."""
        if not isinstance(rel, str) or not rel.strip():
            raise AgentError("a path must be a non-empty string relative to the workspace")
        pure = PurePosixPath(rel.strip())
        if pure.is_absolute() or "\\" in rel or any(p in ("..", "") for p in pure.parts):
            raise AgentError(f"{rel!r}: paths must be relative to the workspace, without '..'")
        if any(p.startswith(".") for p in pure.parts):
            raise AgentError(f"{rel!r}: hidden names (starting with '.') are not allowed")
        p = self.root
        for part in pure.parts:
            p = p / part
            if p.is_symlink():
                raise AgentError(f"{rel!r}: symbolic links are not allowed")
        if must_exist and not p.is_file():
            raise AgentError(f"{rel}: no such file (use list_files)")
        return p

    def rel(self, p: Path) -> str:
        return p.relative_to(self.root).as_posix()

    def files(self) -> list[Path]:
        out = [p for p in sorted(self.root.rglob("*")) if p.is_file() and not p.is_symlink()
               and not any(part.startswith(".") for part in p.relative_to(self.root).parts)]
        return out[:MAX_FILES]

    def save(self, dest: Path, writer: Callable[[Path], None]) -> None:
        """Write through a temporary file and rename, so a failed save never leaves half a file."""
        if len(self.files()) >= MAX_FILES and not dest.exists():
            raise AgentError(f"the workspace already holds {MAX_FILES} files")
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=dest.suffix, dir=dest.parent)
        os.close(fd)
        try:
            writer(Path(tmp))
            os.replace(tmp, dest)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
