"""The 18 languages' toolchains: Debian 12 packages, a check command, the report format.

`list_toolchains()` says what is present (the check command succeeds), its version line, and the
packages' sizes from `apt-cache show` (Installed-Size, KiB); `install(langs)` lists the sizes
first and then runs `apt-get install`. Sandboxes see the host's `/usr` read-only, so a toolchain
installed here is available to every task of that language.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Toolchain:
    language: str
    apt: tuple[str, ...]
    check: str
    report: str


TOOLCHAINS: dict[str, Toolchain] = {t.language: t for t in (
    Toolchain("python", ("python3", "python3-pytest"), "/usr/bin/python3 -m pytest --version", "junit_xml"),
    Toolchain("javascript", ("nodejs",), "node --version", "junit_xml"),
    Toolchain("typescript", ("nodejs", "node-typescript"), "node --version && tsc --version", "junit_xml"),
    Toolchain("go", ("golang-go",), "go version", "go_test_json"),
    Toolchain("rust", ("rustc", "cargo"), "/usr/bin/cargo --version && /usr/bin/rustc --version", "libtest_json"),
    Toolchain("java", ("openjdk-17-jdk-headless", "junit5"),
              "javac -version && test -f /usr/share/java/junit-platform-console-standalone.jar", "junit_xml"),
    Toolchain("c", ("gcc", "make", "cmake"), "gcc --version && cmake --version", "junit_xml"),
    Toolchain("cpp", ("g++", "cmake", "googletest", "libgtest-dev"),
              "g++ --version && test -f /usr/include/gtest/gtest.h", "junit_xml"),
    Toolchain("csharp", ("mono-mcs", "nunit-console", "libnunit-cil-dev"),
              "mcs --version && command -v nunit-console", "nunit_xml"),
    Toolchain("php", ("php-cli", "phpunit"), "php --version && phpunit --version", "junit_xml"),
    Toolchain("ruby", ("ruby", "ruby-rspec"), "ruby --version && rspec --version", "rspec_json"),
    Toolchain("perl", ("perl", "libtap-formatter-junit-perl"), "perl -v && prove --version", "tap"),
    Toolchain("lua", ("lua5.4", "lua-busted"), "lua5.4 -v && busted --version", "junit_xml"),
    # erlang-dev carries eunit.hrl, which the tests include.
    Toolchain("erlang", ("erlang-base", "erlang-eunit", "erlang-dev"),
              "erl -noshell -eval 'io:format(\"Erlang/OTP ~s~n\", [erlang:system_info(otp_release)]), halt().' "
              "&& test -f /usr/lib/erlang/lib/eunit-*/include/eunit.hrl", "junit_xml"),
    Toolchain("elixir", ("elixir",), "elixir --version", "junit_xml"),
    Toolchain("r", ("r-base-core", "r-cran-testthat", "r-cran-xml2"),
              "Rscript -e 'library(testthat); cat(R.version.string, \"\\n\")'", "junit_xml"),
    Toolchain("ocaml", ("ocaml-nox", "ocaml-dune", "libounit-ocaml-dev"),
              "ocamlfind ocamlopt -version || ocaml -version", "junit_xml"),
    Toolchain("haskell", ("ghc", "cabal-install", "libghc-tasty-dev", "libghc-tasty-hunit-dev",
                          "libghc-tasty-ant-xml-dev"), "ghc --version", "junit_xml"),
)}


@dataclass
class ToolchainStatus:
    language: str
    present: bool
    version: str
    packages: dict[str, int]  # name → Installed-Size in KiB (0 when apt does not know it)
    installed: dict[str, bool]
    report: str

    @property
    def size_kib(self) -> int:
        return sum(self.packages.values())

    def as_dict(self) -> dict:
        return {**asdict(self), "size_kib": self.size_kib}


def _sh(command: str, timeout: float = 60) -> tuple[int, str]:
    """Run `command` in a throwaway working directory: whatever a check leaves behind (erl's
    erl_crash.dump when its output pipe closes early) goes with it, not into the caller's."""
    with tempfile.TemporaryDirectory(prefix="envhub-sh-") as cwd:
        try:
            p = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=timeout, cwd=cwd,
                               env={"PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C.UTF-8", "HOME": "/tmp"})
        except subprocess.TimeoutExpired:
            return 124, "timed out"
    return p.returncode, (p.stdout + p.stderr).strip()


def package_sizes(packages: list[str]) -> dict[str, int]:
    """Installed-Size (KiB) of each package per `apt-cache show` (its own size, not dependencies)."""
    if not shutil.which("apt-cache"):
        return {p: 0 for p in packages}
    _, out = _sh("apt-cache show --no-all-versions " + " ".join(packages) + " 2>/dev/null", timeout=120)
    sizes: dict[str, int] = {p: 0 for p in packages}
    name = None
    for line in out.splitlines():
        if line.startswith("Package:"):
            name = line.split(":", 1)[1].strip()
        elif line.startswith("Installed-Size:") and name in sizes:
            sizes[name] = int(line.split(":", 1)[1].strip() or 0)
    return sizes


def installed(packages: list[str]) -> dict[str, bool]:
    _, out = _sh("dpkg-query -W -f '${Package} ${db:Status-Status}\\n' " + " ".join(packages) + " 2>/dev/null")
    ok = {line.split()[0].split(":")[0] for line in out.splitlines() if line.endswith(" installed")}
    return {p: p in ok for p in packages}


#: check command → (present, when checked). A present toolchain stays present for the process;
#: a missing one is checked again after MISSING_RECHECK_S, so an install shows up while serving.
_checked: dict[str, tuple[bool, float]] = {}
_checked_lock = threading.Lock()
MISSING_RECHECK_S = 10.0


def present(checks: list[str]) -> dict[str, bool]:
    """Whether each check command succeeds on this machine (run in parallel, cached)."""
    now = time.monotonic()
    with _checked_lock:
        stale = [c for c in dict.fromkeys(checks)
                 if c not in _checked or (not _checked[c][0] and now - _checked[c][1] > MISSING_RECHECK_S)]
    if stale:
        with ThreadPoolExecutor(max_workers=min(8, len(stale))) as pool:
            codes = list(pool.map(lambda c: _sh(c)[0], stale))
        with _checked_lock:
            _checked.update({c: (code == 0, time.monotonic()) for c, code in zip(stale, codes, strict=True)})
    return {c: _checked[c][0] for c in checks}


def missing_languages(languages: list[str] | None = None) -> list[str]:
    """The languages (all 18 by default) whose toolchain check fails here."""
    langs = resolve(languages)
    ok = present([TOOLCHAINS[lang].check for lang in langs])
    return [lang for lang in langs if not ok[TOOLCHAINS[lang].check]]


def status(language: str) -> ToolchainStatus:
    tc = TOOLCHAINS[language]
    code, out = _sh(tc.check)
    version = out.splitlines()[0][:120] if code == 0 and out else ""
    packages = list(tc.apt)
    return ToolchainStatus(language, code == 0, version, package_sizes(packages), installed(packages), tc.report)


def list_toolchains(languages: list[str] | None = None) -> list[ToolchainStatus]:
    """Status of each language's toolchain (all 18 by default)."""
    return [status(lang) for lang in resolve(languages)]


def resolve(languages: list[str] | None) -> list[str]:
    if not languages:
        return list(TOOLCHAINS)
    unknown = [lang for lang in languages if lang not in TOOLCHAINS]
    if unknown:
        raise ValueError(f"unknown language(s) {', '.join(unknown)}; known: {', '.join(TOOLCHAINS)}")
    return languages


def packages_for(languages: list[str] | None) -> list[str]:
    return sorted({p for lang in resolve(languages) for p in TOOLCHAINS[lang].apt})


@dataclass
class Plan:
    """What `apt-get install` would do: every package it unpacks (dependencies included) and the
    bytes it has to download (what the local archive cache does not hold)."""

    packages: list[str]
    download_bytes: int


def plan(missing: list[str]) -> Plan:
    """Ask apt (without installing) for the full package list and the download size."""
    code, out = _sh("apt-get install -s -qq --no-install-recommends " + " ".join(missing), timeout=300)
    if code != 0:
        raise RuntimeError(f"apt-get cannot install {' '.join(missing)}: {out[-500:]}")
    unpacked = [line.split()[1] for line in out.splitlines() if line.startswith("Inst ")]
    _, uris = _sh("apt-get install --print-uris -qq --no-install-recommends " + " ".join(missing), timeout=300)
    size = sum(int(parts[2]) for parts in (line.split() for line in uris.splitlines())
               if len(parts) >= 3 and parts[0].startswith("'") and parts[2].isdigit())
    return Plan(unpacked, size)


def _apt_update() -> None:
    subprocess.run(["apt-get", "update", "-qq"], check=False,
                   env={"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})


def install(languages: list[str] | None, *, dry_run: bool = False, echo=print,  # noqa: T202
            progress: Callable[[str, float, str], None] | None = None) -> dict:
    """apt-get install the toolchains of `languages` (all when empty); returns sizes and timing.

    `progress(phase, percent, detail)` is called as apt reports it ("download" then "install"),
    read from apt's machine-readable status stream (`APT::Status-Fd`), not its console text."""
    packages = packages_for(languages)
    have = installed(packages)
    missing = [p for p in packages if not have[p]]
    result = {"packages": packages, "missing": missing, "sizes_kib": {}, "seconds": 0.0, "ok": True,
              "unpacked": 0, "download_bytes": 0}
    if not missing and not dry_run:  # the common case on a second `make up`: one line
        echo(f"  all {len(packages)} packages installed")
        return result
    started = time.monotonic()
    todo = None
    if missing:
        try:
            todo = plan(missing)
        except RuntimeError:  # a fresh machine has no package lists yet (or stale ones)
            _apt_update()
            todo = plan(missing)
    result["sizes_kib"] = sizes = package_sizes(packages)
    for p in packages:
        echo(f"  {p:32} {sizes[p] / 1024:8.1f} MiB  {'installed' if have[p] else 'to install'}")
    if todo is None:
        return result
    result.update(unpacked=len(todo.packages), download_bytes=todo.download_bytes)
    echo(f"  {len(missing)} to install: {len(todo.packages)} packages with their dependencies, "
         f"{todo.download_bytes / 1e6:.1f} MB to download")
    if dry_run:
        return result
    ok = _run_apt(missing, todo.download_bytes, progress or (lambda *_: None))
    result.update(seconds=round(time.monotonic() - started, 1), ok=ok)
    return result


def _run_apt(missing: list[str], download_bytes: int, progress: Callable[[str, float, str], None]) -> bool:
    """apt-get install with its status lines (`dlstatus:`/`pmstatus:`) on a pipe, console text to a log.
    The download's detail is MB so far (apt's percentage of the planned bytes); the install's is
    the package dpkg is at."""
    read_fd, write_fd = os.pipe()
    log = tempfile.NamedTemporaryFile("w+", prefix="envhub-apt-", suffix=".log", delete=False)  # noqa: SIM115
    proc = subprocess.Popen(["apt-get", "install", "-y", "-q", "--no-install-recommends",
                             "-o", "DPkg::Lock::Timeout=900", "-o", f"APT::Status-Fd={write_fd}", *missing],
                            env={"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
                            stdout=log, stderr=subprocess.STDOUT, pass_fds=(write_fd,))
    os.close(write_fd)
    with os.fdopen(read_fd) as status_lines:
        for line in status_lines:
            kind, _, rest = line.partition(":")
            fields = rest.split(":", 2)
            if kind in ("dlstatus", "pmstatus") and len(fields) == 3:
                with contextlib.suppress(ValueError):
                    percent = float(fields[1])
                    if kind == "dlstatus":
                        progress("download", percent, f"{percent / 100 * download_bytes / 1e6:.0f} of "
                                                      f"{download_bytes / 1e6:.0f} MB")
                    else:
                        progress("install", percent, fields[0])
    ok = proc.wait() == 0
    log.close()
    if not ok:
        with open(log.name) as f:
            sys.stderr.write(f.read()[-4000:])
        sys.stderr.write(f"apt-get failed; its whole log: {log.name}\n")
    else:
        os.unlink(log.name)
    return ok
