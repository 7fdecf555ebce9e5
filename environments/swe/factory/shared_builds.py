"""Dependency builds shared by a package's tasks (Rust: cargo's target folder).

A vendored crate's suite spends most of its time compiling the same Debian crates into a fresh
target folder (url: 42 s of its 58 s). The install step (`envhub swe sources fetch`) builds the
clean tree once and keeps its target folder, less every artifact of the package's own crates, under
`ROOT` (in /usr, so every sandbox, the verifier's and the agent's, sees it read-only). A task's
build first copies it to the folder the manifest names (`prebuilt: $TMPDIR/target`) when that does
not exist yet; cargo then compiles only the package itself.

Why this cannot be forged: nothing of the package is kept (its fingerprints, outputs and build
scripts' outputs are dropped), so cargo always compiles the agent's code, however its files' mtimes
are set; what is kept was compiled from /usr/share/cargo/registry, which every run reads anyway.
Where the folder is missing (not installed, another machine, the Docker backend's image) the build
is cold: the same verdicts, slower.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from environments.swe import source as swe_source

if TYPE_CHECKING:
    from environments.swe.factory.packages import Package

ROOT = Path("/usr/local/lib/envhub/swe-prebuilt")
#: Languages whose target folder the install step knows how to strip of the package's own crates.
LANGUAGES = ("rust",)


class PrebuiltError(RuntimeError):
    """The install step's build of the clean tree failed."""


def folder(pkg: Package) -> Path:
    """Where `pkg`'s shared build lives: by its source's content key (a crate of a vendored tree
    has its own root, so its own key)."""
    return ROOT / pkg.source.key


def restore_command(pkg: Package) -> str:
    """Shell that copies the shared build into place before the package's own build, once: a copy
    that fails is removed and the build runs cold (never a half-copied folder)."""
    dest = pkg.prebuilt.replace('"', "")
    src = shlex.quote(str(folder(pkg)))
    return (f'd="{dest}"; if [ -d {src}/target ] && [ ! -e "$d" ]; then '
            f'cp -a {src}/target "$d.part" && mv -T "$d.part" "$d" || rm -rf "$d.part"; fi')


@lru_cache(maxsize=1)
def _toolchain() -> tuple[str, str]:
    """rustc's and cargo's versions (asked once per process: `sources list` checks every package)."""
    def version(*argv: str) -> str:
        try:
            return subprocess.run(argv, capture_output=True, text=True, timeout=60).stdout.strip()
        except OSError:
            return ""
    return version("/usr/bin/rustc", "-V"), version("/usr/bin/cargo", "-V")


def _stamp(pkg: Package) -> dict[str, str]:
    """What the kept build depends on besides the Debian crates: the toolchain and the commands."""
    rustc, cargo = _toolchain()
    return {"source": pkg.source.key, "build": pkg.build, "env": json.dumps(pkg.env, sort_keys=True),
            "prebuilt": pkg.prebuilt, "rustc": rustc, "cargo": cargo}


def present(pkg: Package) -> bool:
    """Whether the kept build is there and made by today's toolchain and commands."""
    try:
        return json.loads((folder(pkg) / "stamp.json").read_text()) == _stamp(pkg)
    except (OSError, ValueError):
        return False


def _own_artifacts(tree: Path, env: dict[str, str]) -> tuple[set[str], set[str]]:
    """The package's own crate names and target names (`cargo metadata --no-deps`)."""
    proc = subprocess.run(["/usr/bin/cargo", "metadata", "--no-deps", "--offline", "--format-version", "1"],
                          cwd=tree, env=env, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise PrebuiltError(f"cargo metadata failed: {proc.stderr.strip()[-600:]}")
    packages = json.loads(proc.stdout)["packages"]
    names = {p["name"] for p in packages} | {p["name"].replace("-", "_") for p in packages}
    targets = {t["name"].replace("-", "_") for p in packages for t in p["targets"]}
    return names, targets


def strip_own(target: Path, names: set[str], targets: set[str]) -> list[Path]:
    """Delete what the package's own crates left in `target` (every profile folder): fingerprints,
    build-script outputs, compiled crates and test binaries, examples, incremental state."""
    dropped = []
    for profile in (p for p in target.iterdir() if p.is_dir()):
        doomed = [profile / "examples", profile / "incremental"]
        doomed += [p for n in names for sub in (".fingerprint", "build") for p in (profile / sub).glob(f"{n}-*")]
        doomed += [p for t in targets for pat in (f"{t}-*", f"lib{t}-*", f"{t}.*", f"lib{t}.*")
                   for p in (profile / "deps").glob(pat)]
        doomed += [p for t in targets for p in profile.glob(f"{t}*") if p.is_file()]
        doomed += [p for t in targets for p in profile.glob(f"lib{t}.*")]
        for p in doomed:
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
                dropped.append(p)
            elif p.exists() or p.is_symlink():
                p.unlink()
                dropped.append(p)
    return dropped


def build(pkg: Package, data_dir: Path) -> bool:
    """Build `pkg`'s clean tree once and keep its target folder under `ROOT` (idempotent: False
    when it was already there). The build runs the package's own `build` with its environment,
    unjailed: an install step over pinned, checksummed upstream code, as `apt-get install` runs its
    packages' scripts (no agent's code is ever built here)."""
    if not pkg.prebuilt or present(pkg):
        return False
    from verifiers.swe import SweConfig, run_env

    work = Path(tempfile.mkdtemp(prefix="swe-prebuilt-"))
    try:
        tree = work / "tree"
        shutil.copytree(swe_source.tree(pkg.source, data_dir), tree, symlinks=True)
        env = run_env(SweConfig.from_metadata(pkg.metadata()), work, work)  # a graded build's environment
        proc = subprocess.run(["/bin/bash", "--noprofile", "--norc", "-c", pkg.build], cwd=tree, env=env,
                              capture_output=True, text=True, timeout=3600)
        if proc.returncode != 0:
            raise PrebuiltError(f"{pkg.id}: the clean build failed: {(proc.stderr or proc.stdout).strip()[-800:]}")
        target = Path(pkg.prebuilt.replace("$TMPDIR", env["TMPDIR"]).replace("$HOME", env["HOME"]))
        if not target.is_dir():
            raise PrebuiltError(f"{pkg.id}: the clean build left no {pkg.prebuilt}")
        strip_own(target, *_own_artifacts(tree, env))
        dest = folder(pkg)
        staging = dest.parent / f"{dest.name}.part"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        shutil.move(str(target), staging / "target")
        (staging / "stamp.json").write_text(json.dumps(_stamp(pkg), indent=1, sort_keys=True) + "\n")
        for dirpath, dirnames, filenames in os.walk(staging):  # readable by the jail's uid
            for name in dirnames + filenames:
                p = Path(dirpath) / name
                if not p.is_symlink():
                    p.chmod((p.stat().st_mode & 0o755) | 0o444 | (0o111 if p.is_dir() else 0))
        for p in (staging, *staging.parents):
            if p == ROOT.parent.parent:
                break
            p.chmod(0o755)
        shutil.rmtree(dest, ignore_errors=True)
        os.replace(staging, dest)
        return True
    finally:
        shutil.rmtree(work, ignore_errors=True)
