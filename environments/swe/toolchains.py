"""The 18 languages' toolchains: Debian 12 packages, a check command, the report format.

`list_toolchains()` says what is present (the check command succeeds), its version line, and the
packages' sizes from `apt-cache show` (Installed-Size, KiB); `install(langs)` lists the sizes
first and then runs `apt-get install`. Sandboxes see the host's `/usr` read-only, so a toolchain
installed here is available to every task of that language.
"""

from __future__ import annotations

import shutil
import subprocess
import time
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
    try:
        p = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=timeout,
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


def install(languages: list[str] | None, *, dry_run: bool = False, echo=print) -> dict:  # noqa: T202
    """apt-get install the toolchains of `languages` (all when empty); returns sizes and timing."""
    packages = packages_for(languages)
    sizes = package_sizes(packages)
    have = installed(packages)
    missing = [p for p in packages if not have[p]]
    for p in packages:
        echo(f"  {p:32} {sizes[p] / 1024:8.1f} MiB  {'installed' if have[p] else 'to install'}")
    echo(f"  {len(missing)} to install, {sum(sizes[p] for p in missing) / 1024:.1f} MiB of their own "
         "(plus dependencies)")
    result = {"packages": packages, "missing": missing, "sizes_kib": sizes, "seconds": 0.0, "ok": True}
    if dry_run or not missing:
        return result
    started = time.monotonic()
    proc = subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", "-o", "DPkg::Lock::Timeout=900",
                           *missing],
                          env={"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
    result.update(seconds=round(time.monotonic() - started, 1), ok=proc.returncode == 0)
    return result
