"""`envhub swe sources fetch`: each pinned file downloaded once, checked, stored by its sha256.

PyPI and npm files come from the registry URL in the manifest; Debian's from `apt-get source
--download-only NAME=VERSION` (the machine's deb-src entry: `scripts/bootstrap.sh` adds it). A
file whose digest differs from the pin is refused and nothing is stored. The Debian packages a
package's build or tests need (its `apt` list) are installed in the same step, and a package that
declares a shared dependency build has it built (`shared_builds.py`). An install step, like the
toolchains: nothing here runs while serving.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from environments.swe import source as swe_source
from environments.swe import toolchains
from environments.swe.factory import shared_builds
from environments.swe.factory.packages import Package

Progress = Callable[[str, int, int], None]  # (file name, bytes done, bytes total or 0)


class FetchError(RuntimeError):
    """A file could not be downloaded, or its digest is not the pinned one."""


@dataclass
class Fetched:
    package: str
    stored: list[str] = field(default_factory=list)   # newly stored file names
    present: list[str] = field(default_factory=list)  # already in the store
    bytes: int = 0
    apt_installed: list[str] = field(default_factory=list)
    built: bool = False  # its shared dependency build made now


def _store(data_dir: Path, path: Path, want: str, name: str) -> int:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    if h.hexdigest() != want:
        raise FetchError(f"{name}: sha256 {h.hexdigest()} is not the pinned {want}")
    dest = swe_source.store_dir(data_dir) / want
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(".part")
    shutil.copyfile(path, tmp)
    tmp.chmod(0o644)
    os.replace(tmp, dest)
    for p in (dest.parent, dest.parent.parent):
        p.chmod(0o755)
    return dest.stat().st_size


def _download(url: str, dest: Path, name: str, progress: Progress) -> None:
    try:
        with urllib.request.urlopen(url, timeout=120) as r, open(dest, "wb") as out:  # noqa: S310 - pinned https
            total, done = int(r.headers.get("Content-Length") or 0), 0
            while chunk := r.read(1 << 16):
                out.write(chunk)
                done += len(chunk)
                progress(name, done, total)
    except OSError as e:
        raise FetchError(f"{name}: download from {url} failed: {e}") from e


def _apt_source(pkg: Package, work: Path) -> None:
    proc = subprocess.run(["apt-get", "source", "--download-only", "-qq", f"{pkg.name}={pkg.version}"], cwd=work,
                          capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        hint = " (is there a deb-src entry? scripts/bootstrap.sh adds one)" if "deb-src" in proc.stderr else ""
        raise FetchError(f"apt-get source {pkg.name}={pkg.version} failed{hint}: {proc.stderr.strip()[-600:]}")


def _install_apt(pkg: Package) -> list[str]:
    lacking = [p for p, ok in toolchains.installed(list(pkg.apt)).items() if not ok] if pkg.apt else []
    if not lacking:
        return []
    proc = subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends",
                           "-o", "DPkg::Lock::Timeout=900", *lacking], capture_output=True, text=True, timeout=1800,
                          env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    if proc.returncode != 0:
        raise FetchError(f"{pkg.id}: apt-get install {' '.join(lacking)} failed: {proc.stderr.strip()[-600:]}")
    return lacking


def fetch(pkg: Package, data_dir: Path, progress: Progress = lambda *_: None, *, apt: bool = True,
          shared_build: bool = True) -> Fetched:
    """Store every pinned file of `pkg` that the store lacks (idempotent); with `apt`, install its
    Debian packages and, with `shared_build`, make its shared dependency build."""
    out = Fetched(pkg.id)
    lacking = swe_source.missing(pkg.source, data_dir)
    out.present = [f.name for f in pkg.source.files if f not in lacking]
    if lacking:
        work = Path(tempfile.mkdtemp(prefix="swe-fetch-"))
        try:
            if pkg.registry == "debian":
                _apt_source(pkg, work)
            for f in lacking:
                path = work / f.name
                if pkg.registry != "debian":
                    if f.name not in pkg.urls:
                        raise FetchError(f"{pkg.id}: no url pinned for {f.name}")
                    _download(pkg.urls[f.name], path, f.name, progress)
                elif not path.is_file():
                    raise FetchError(f"{pkg.id}: apt-get source did not download {f.name} "
                                     f"(got {', '.join(sorted(p.name for p in work.iterdir()))})")
                out.bytes += _store(data_dir, path, f.sha256, f.name)
                out.stored.append(f.name)
                progress(f.name, 1, 1)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    if apt:
        out.apt_installed = _install_apt(pkg)
    if apt and shared_build:
        try:
            out.built = shared_builds.build(pkg, data_dir)
        except shared_builds.PrebuiltError as e:
            raise FetchError(str(e)) from e
    return out


def store_size(data_dir: Path) -> int:
    root = swe_source.store_dir(data_dir)
    return sum(p.stat().st_size for p in root.iterdir()) if root.is_dir() else 0
