"""The verifier's Python runtime, kept apart from the server's.

Verifiers run as an unprivileged uid inside bubblewrap, so they use Debian's `/usr/bin/python3`
(under the read-only `/usr`) with packages installed into `<data_dir>/verifier/site` by
`envhub setup`, and a copy of the `verifiers` library plus the result plugin in
`<data_dir>/verifier/lib`. A stamp of the requirements file tells when the site is out of date.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from envhub.config import REPO_ROOT
from envhub.errors import SandboxUnavailable
from envhub.verify.verdict import PYTEST_INI

PYTHON = "/usr/bin/python3"
REQUIREMENTS = REPO_ROOT / "verifiers" / "requirements.txt"


def _stamp() -> str:
    return hashlib.sha256(REQUIREMENTS.read_bytes() + b"compiled").hexdigest()


def site_dir(data_dir: Path) -> Path:
    return data_dir / "verifier" / "site"


def _lib_sha() -> str:
    from envhub.tasks.model import tree_sha256

    here = Path(__file__)
    return (tree_sha256(REPO_ROOT / "verifiers")[:12] + tree_sha256(here.with_name("plugin.py"))[:6]
            + tree_sha256(here.with_name("zygote.py"))[:6] + hashlib.sha256(PYTEST_INI.encode()).hexdigest()[:4])


def install(data_dir: Path, *, quiet: bool = True) -> None:
    """Install the verifier site packages (needs the package index; run once at setup)."""
    site = site_dir(data_dir)
    stamp = site / ".envhub-stamp"
    if stamp.is_file() and stamp.read_text() == _stamp():
        return
    shutil.rmtree(site, ignore_errors=True)
    site.mkdir(parents=True)
    cmd = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--no-compile",
           "--target", str(site), "-r", str(REQUIREMENTS)]
    subprocess.run(cmd + (["-q"] if quiet else []), check=True)
    _compile(site)
    stamp.write_text(_stamp())
    data_dir.chmod(0o755)


def _compile(folder: Path) -> None:
    """Byte-compile with the verifier's own interpreter: the sandbox cannot write .pyc files, and
    without them every verification pays for compiling pytest again (about twice as slow)."""
    subprocess.run([PYTHON, "-m", "compileall", "-q", "-j", "0", str(folder)], check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def sync_lib(data_dir: Path) -> Path:
    """Copy the verifiers library and the result plugin where the sandbox can read them.

    The folder is named by its content, so servers sharing a data folder never replace a library
    another one is using.
    """
    if not Path(PYTHON).exists():
        raise SandboxUnavailable(f"{PYTHON} is missing: apt-get install python3")
    stamp = site_dir(data_dir) / ".envhub-stamp"
    if not stamp.is_file() or stamp.read_text() != _stamp():
        raise SandboxUnavailable("the verifier runtime is not installed or out of date: run `envhub setup`")
    lib = data_dir / "verifier" / f"lib-{_lib_sha()}"
    if lib.is_dir():
        return lib
    tmp = lib.with_name(f"{lib.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(REPO_ROOT / "verifiers", tmp / "verifiers",
                    ignore=shutil.ignore_patterns("__pycache__", "requirements.txt"))
    shutil.copy2(Path(__file__).with_name("plugin.py"), tmp / "envhub_result_plugin.py")
    shutil.copy2(Path(__file__).with_name("zygote.py"), tmp / "envhub_zygote.py")
    (tmp / "pytest.ini").write_text(PYTEST_INI)
    _compile(tmp)
    try:
        tmp.rename(lib)
    except OSError:  # another process made it first
        shutil.rmtree(tmp, ignore_errors=True)
    return lib
