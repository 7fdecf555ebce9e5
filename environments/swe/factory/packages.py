"""The factory's pinned packages: `packages/<registry>.yaml`, one entry per package version.

The format is documented in `packages/README.md`. An entry names what to fetch (files with
sha256), how to unpack it, how to build and test it with the language's Debian toolchain, and
which files the factory may mutate; `suite_s` and `tests` are what its clean suite measured here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from environments.swe import toolchains
from environments.swe.factory import shared_builds
from environments.swe.source import Source

PACKAGES_DIR = Path(__file__).parent / "packages"
REGISTRIES = ("pypi", "npm", "debian")


class PackageError(ValueError):
    """A manifest entry that cannot be used, or a package nobody pinned."""


@dataclass(frozen=True)
class Package:
    id: str
    registry: str
    name: str
    version: str
    language: str
    source: Source
    urls: dict[str, str]
    test_command: str
    report: dict[str, str]
    source_globs: tuple[str, ...]
    test_globs: tuple[str, ...]
    protected_paths: tuple[str, ...]
    build: str = ""
    env: dict[str, str] = field(default_factory=dict)
    apt: tuple[str, ...] = ()
    toolchain: dict[str, Any] = field(default_factory=dict)
    suite_s: float = 0.0
    tests: int = 0
    notes: str = ""
    #: The folder `build` fills (`$TMPDIR/target`) that the install step builds once from the clean
    #: tree and every task's build starts from (`shared_builds.py`); empty: none.
    prebuilt: str = ""

    @property
    def slug(self) -> str:
        """The package's folder under tasks/swe/<language>/ (a name a task id accepts): a package
        that is a folder of its source (a vendored crate) is named by that folder."""
        name = self.source.root.rsplit("/", 1)[-1] if self.source.root else self.name
        return "".join(c if c.isalnum() or c in "-_." else "-" for c in name.lower()).strip("-.")

    def metadata(self) -> dict[str, Any]:
        """The SWE metadata of the package's tasks (`task.yaml`), less the per-task facts."""
        tc = self.toolchain or {}
        if not tc:
            chain = toolchains.TOOLCHAINS[self.language]
            tc = {"apt": list(chain.apt), "check": chain.check}
        apt = list(dict.fromkeys([*tc.get("apt", ()), *self.apt]))
        src = {"id": self.source.id, "files": [{"name": f.name, "sha256": f.sha256} for f in self.source.files],
               "unpack": self.source.unpack}
        if self.source.exclude:
            src["exclude"] = list(self.source.exclude)
        if self.source.lf:
            src["lf"] = list(self.source.lf)
        if self.source.root:
            src["root"] = self.source.root
        out: dict[str, Any] = {"language": self.language, "package": self.id,
                               "toolchain": {"apt": apt, "check": tc.get("check", "")}, "source": src,
                               "test_command": self.test_command, "report": dict(self.report),
                               "protected_paths": list(self.protected_paths)}
        if self.build:
            out["build"] = f"{shared_builds.restore_command(self)}; {self.build}" if self.prebuilt else self.build
        if self.env:
            out["env"] = dict(self.env)
        return out


def _entry(raw: dict[str, Any], where: str) -> Package:
    try:
        pid = str(raw["id"])
        registry = str(raw["registry"])
        language = str(raw["language"])
        if registry not in REGISTRIES:
            raise PackageError(f"{where}: {pid}: registry {registry!r} is not one of {', '.join(REGISTRIES)}")
        if language not in toolchains.TOOLCHAINS:
            raise PackageError(f"{where}: {pid}: unknown language {language!r}")
        files = raw["files"]
        src = Source.from_metadata({"id": pid, "files": files, "unpack": raw.get("unpack", "archive"),
                                    "exclude": raw.get("exclude") or [], "lf": raw.get("lf") or [],
                                    "root": raw.get("root") or ""},
                                   f"{where}: {pid}")
        report = {"format": str(raw["report"]["format"]), "file": str(raw["report"]["file"])}
        test_globs = tuple(raw["test_globs"])
        shared = str(raw.get("prebuilt") or "")
        if shared and (language not in shared_builds.LANGUAGES or not raw.get("build")):
            raise PackageError(f"{where}: {pid}: prebuilt needs a build command and one of the languages "
                               f"{', '.join(shared_builds.LANGUAGES)}")
        protected = tuple(raw.get("protected_paths") or test_globs)
        return Package(id=pid, registry=registry, name=str(raw["name"]), version=str(raw["version"]),
                       language=language, source=src, urls={f["name"]: f["url"] for f in files if f.get("url")},
                       test_command=str(raw["test_command"]), report=report,
                       source_globs=tuple(raw["source_globs"]), test_globs=test_globs, protected_paths=protected,
                       build=str(raw.get("build") or ""),
                       env={str(k): str(v) for k, v in (raw.get("env") or {}).items()},
                       apt=tuple(raw.get("apt") or ()), toolchain=dict(raw.get("toolchain") or {}),
                       suite_s=float(raw.get("suite_s") or 0), tests=int(raw.get("tests") or 0),
                       notes=str(raw.get("notes") or ""), prebuilt=shared)
    except (KeyError, TypeError) as e:
        raise PackageError(f"{where}: entry {raw.get('id', '?') if isinstance(raw, dict) else raw!r} lacks {e}") from e


@lru_cache(maxsize=4)
def load_all(root: Path | None = None) -> dict[str, Package]:
    """Every pinned package of the manifests under `root` (default: the factory's own)."""
    root = root or PACKAGES_DIR
    out: dict[str, Package] = {}
    for path in sorted(root.glob("*.yaml")):
        for raw in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            pkg = _entry(raw, path.name)
            if pkg.id in out:
                raise PackageError(f"{path.name}: {pkg.id} is pinned twice")
            out[pkg.id] = pkg
    return out


def find(spec: str, root: Path | None = None) -> Package:
    """`NAME`, `NAME==VERSION` or a package id (`pypi/toolz-0.12.1`); NAME is the registry's name,
    else the package's folder (`slug`: a vendored crate's)."""
    pkgs = load_all(root)
    if spec in pkgs:
        return pkgs[spec]
    name, _, version = spec.partition("==")
    versions = [p for p in pkgs.values() if not version or p.version == version]
    # the registry's name first: a vendored crate's folder (`semver`) must not shadow PyPI's semver
    hits = [p for p in versions if p.name == name] or [p for p in versions if p.slug == name]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise PackageError(f"no pinned package {spec!r} (see `envhub swe sources list`)")
    raise PackageError(f"{spec!r} names {len(hits)} pinned versions ({', '.join(p.id for p in hits)}): add ==VERSION")
