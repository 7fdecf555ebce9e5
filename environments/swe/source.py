"""The pinned upstream source a factory task starts from: found in the store, checked, unpacked.

A factory task (`environments/swe/factory`) ships no repository. Its `task.yaml` names a
package version the registries serve, pinned file by file:

    metadata:
      source:
        id: pypi/toolz-0.12.1
        files: [{name: toolz-0.12.1.tar.gz, sha256: 4f4...}]
        unpack: archive          # or dsc: `dpkg-source -x` (Debian: upstream plus Debian's patches)
        exclude: [docs/**]       # deleted after unpacking
        lf: [src/x.cpp]          # files whose CRLF line ends become LF (patches apply as text)
        root: vendor/semver      # the package is this folder of the unpacked tree (a vendored crate)

`envhub swe sources fetch` downloads those files once into `<data_dir>/swe-sources/sha256/<hex>`
(content-addressed: tasks of one package share them; an install step, never run while serving).
The unpacked tree is cached read-only under `<data_dir>/swe-cache/src-<key>/tree`; the task's
base checkout is that tree with the gold patch reversed (the bug), committed once
(`environments/swe/repo.py`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envhub.errors import EnvError, RequirementMissing, TaskInvalid
from verifiers.swe import is_protected

UNPACKERS = ("archive", "dsc")
#: Part of every unpacked tree's cache key: bump it when unpacking changes what a tree holds.
UNPACK_VERSION = 1
_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


@dataclass(frozen=True)
class SourceFile:
    name: str
    sha256: str


@dataclass(frozen=True)
class Source:
    id: str
    files: tuple[SourceFile, ...]
    unpack: str = "archive"
    exclude: tuple[str, ...] = ()
    #: globs of files whose CRLF line ends are made LF after unpacking: a patch applies as text, so a
    #: CRLF file could never carry a bug (tinyxml2 ships its source with CRLF)
    lf: tuple[str, ...] = ()
    #: the folder of the unpacked tree that is the package (a crate vendored in Debian's `cargo`
    #: source); `exclude` and `lf` are read inside it
    root: str = ""

    @classmethod
    def from_metadata(cls, raw: Any, where: str = "task") -> Source:
        try:
            files = tuple(SourceFile(str(f["name"]), str(f["sha256"]).lower()) for f in raw["files"])
            src = cls(id=str(raw["id"]), files=files, unpack=str(raw.get("unpack", "archive")),
                      exclude=tuple(str(g) for g in raw.get("exclude") or ()),
                      lf=tuple(str(g) for g in raw.get("lf") or ()), root=str(raw.get("root") or ""))
        except (KeyError, TypeError) as e:
            raise TaskInvalid(f"{where}: bad metadata.source: {e!r}") from e
        bad = [f.name for f in files if len(f.sha256) != 64 or any(c not in "0123456789abcdef" for c in f.sha256)
               or "/" in f.name or f.name.startswith(".")]
        root = Path(src.root)
        if src.root and (root.is_absolute() or root.as_posix() != src.root or ".." in root.parts or src.root == "."):
            raise TaskInvalid(f"{where}: metadata.source root {src.root!r} is not a plain relative folder")
        if not files or bad or src.unpack not in UNPACKERS:
            raise TaskInvalid(f"{where}: metadata.source needs files with plain names and sha256 digests and an "
                              f"unpack of {', '.join(UNPACKERS)} (bad: {', '.join(bad) or src.unpack})")
        return src

    @property
    def key(self) -> str:
        spec = {"files": [[f.name, f.sha256] for f in self.files], "unpack": self.unpack, "exclude": self.exclude,
                "version": UNPACK_VERSION, **({"lf": self.lf} if self.lf else {}),
                **({"root": self.root} if self.root else {})}
        return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:32]


def of(meta: dict[str, Any], where: str = "task") -> Source | None:
    """The task's pinned source, or None for a task that ships its own repository bundle."""
    raw = meta.get("source")
    return None if raw is None else Source.from_metadata(raw, where)


def store_dir(data_dir: Path) -> Path:
    return data_dir / "swe-sources" / "sha256"


def blob(data_dir: Path, f: SourceFile) -> Path:
    return store_dir(data_dir) / f.sha256


def fetch_command(src: Source) -> str:
    return f"envhub swe sources fetch {src.id}"


def missing(src: Source, data_dir: Path) -> list[SourceFile]:
    return [f for f in src.files if not blob(data_dir, f).is_file()]


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _checked_blobs(src: Source, data_dir: Path) -> list[Path]:
    if gone := missing(src, data_dir):
        raise RequirementMissing(f"source {src.id} is not fetched ({', '.join(f.name for f in gone)})",
                                 retry_after_s=60, reason=f"the source of {src.id} is missing",
                                 fix=fetch_command(src))
    paths = [blob(data_dir, f) for f in src.files]
    for f, p in zip(src.files, paths, strict=True):
        if (got := sha256_of(p)) != f.sha256:  # a store file was changed after the fetch checked it
            raise EnvError(f"source store file {p} for {f.name} has sha256 {got}, not {f.sha256}: "
                           f"delete it and run `{fetch_command(src)}`")
    return paths


def _strip_top(root: Path, dest: Path) -> None:
    """Move the archive's single top folder's content (or everything, if there are several) to `dest`."""
    entries = list(root.iterdir())
    single = len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink()
    os.replace(entries[0] if single else root, dest)


def _extract_archive(path: Path, name: str, out: Path) -> None:
    if name.endswith(".zip"):
        with zipfile.ZipFile(path) as z:
            for info in z.infolist():
                rel = Path(info.filename)
                if rel.is_absolute() or ".." in rel.parts:
                    raise EnvError(f"{name} holds an unsafe entry {info.filename!r}")
            z.extractall(out)
        return
    with tarfile.open(path) as tar:
        members = []
        for m in tar.getmembers():
            rel = Path(m.name)
            if rel.is_absolute() or ".." in rel.parts or m.isdev() or (m.islnk() and ".." in Path(m.linkname).parts):
                raise EnvError(f"{name} holds an unsafe entry {m.name!r}")
            if m.issym() and (Path(m.linkname).is_absolute() or ".." in Path(m.linkname).parts):
                continue  # a link out of the tree is dropped, never followed
            members.append(m)
        tar.extractall(out, members=members, numeric_owner=True)


def unpack(src: Source, data_dir: Path, dest: Path) -> None:
    """Unpack `src` into `dest` (which must not exist): the upstream tree (or its `root` folder),
    minus `exclude`, the files `lf` names with LF line ends."""
    paths = _checked_blobs(src, data_dir)
    work = Path(tempfile.mkdtemp(prefix="swe-src-", dir=dest.parent))
    try:
        whole = work / "whole" if src.root else dest
        if src.unpack == "archive":
            _extract_archive(paths[0], src.files[0].name, work / "x")
            _strip_top(work / "x", whole)
        else:
            named = work / "files"
            named.mkdir()
            for f, p in zip(src.files, paths, strict=True):
                os.symlink(p, named / f.name)
            dsc = [f.name for f in src.files if f.name.endswith(".dsc")]
            if len(dsc) != 1:
                raise TaskInvalid(f"source {src.id}: unpack dsc needs exactly one .dsc file")
            # The checksums are checked above; Debian's signature needs a keyring the sandbox lacks.
            proc = subprocess.run(["dpkg-source", "--no-check", "-x", dsc[0], str(work / "x")],
                                  cwd=named, capture_output=True, text=True, timeout=600)
            if proc.returncode != 0:
                raise EnvError(f"dpkg-source -x {dsc[0]} failed: {(proc.stderr or proc.stdout)[-800:]}")
            os.replace(work / "x", whole)
        if src.root:
            part = whole / src.root
            if not part.resolve().is_relative_to(whole.resolve()) or part.is_symlink() or not part.is_dir():
                raise TaskInvalid(f"source {src.id}: the unpacked tree has no folder {src.root!r}")
            os.replace(part, dest)
        for dirpath, dirnames, filenames in os.walk(dest, topdown=True):
            rel_dir = Path(dirpath).relative_to(dest).as_posix()
            for name in list(dirnames) + filenames:
                rel = name if rel_dir == "." else f"{rel_dir}/{name}"
                p = Path(dirpath) / name
                if name == ".git" or is_protected(rel, src.exclude):
                    if p.is_dir() and not p.is_symlink():
                        shutil.rmtree(p)
                        dirnames.remove(name)
                    else:
                        p.unlink()
                elif not p.is_symlink():
                    p.chmod((p.stat().st_mode & 0o755) | 0o644 | (0o111 if p.is_dir() else 0))
                    if src.lf and p.is_file() and is_protected(rel, src.lf):
                        p.write_bytes(p.read_bytes().replace(b"\r\n", b"\n"))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def tree(src: Source, data_dir: Path) -> Path:
    """The unpacked upstream tree of `src`, built once and kept read-only (thread-safe)."""
    root = data_dir / "swe-cache" / f"src-{src.key}"
    done = root / "tree"
    if done.is_dir():
        return done
    with _locks_guard:
        lock = _locks.setdefault(str(root), threading.Lock())
    with lock:
        if done.is_dir():
            return done
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix="tree-", dir=root))
        try:
            unpack(src, data_dir, tmp / "tree")
            os.replace(tmp / "tree", done)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return done
