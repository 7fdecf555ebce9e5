import configparser
import os
import signal
import time
import urllib.error
import urllib.request

from verifiers import check, fs_state


def get(path: str, token: str | None = None) -> tuple[int, str]:
    req = urllib.request.Request(f"http://127.0.0.1:18080{path}", headers={"X-Token": token} if token else {})
    try:
        with urllib.request.urlopen(req, timeout=2) as r:
            return r.status, r.read().decode().strip()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode().strip()


@check("config-values")
def test_config():
    cfg = configparser.ConfigParser()
    cfg.read_string(fs_state.read_text("service/config.ini"))
    assert cfg.get("server", "host", fallback=None) == "127.0.0.1"
    assert cfg.get("server", "port", fallback=None) == "18080"
    assert cfg.get("app", "greeting", fallback=None) == "hello from envhub"


@check("token-file")
def test_token():
    assert fs_state.read_text("service/token.txt").strip() == "s3cr3t-token"
    assert fs_state.mode("service/token.txt") == 0o600


@check("start-script-works")
def test_start_script():
    ws = fs_state.scratch_copy()
    for stale in ("service/notesd.pid", "service/notesd.log"):
        (ws / stale).unlink(missing_ok=True)
    started = time.monotonic()
    # Run from another directory, its output not captured by us (a detached server must not hold it).
    res = fs_state.run(f"cd / && bash {ws}/service/start.sh >{ws.parent}/start.out 2>&1", cwd=ws, timeout=20)
    assert res.returncode == 0, (ws.parent / "start.out").read_text()[-800:]
    assert time.monotonic() - started < 12, "start.sh took too long"
    pid = int((ws / "service/notesd.pid").read_text().strip())
    try:
        assert get("/health") == (200, "ok")
        assert get("/greeting", "s3cr3t-token") == (200, "hello from envhub")
        assert get("/greeting", "wrong")[0] == 401
        os.kill(pid, 0)
        assert (ws / "service/notesd.log").is_file()
    finally:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
