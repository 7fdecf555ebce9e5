import hashlib

from verifiers import check, fs_state

FILES = {"bin/start.sh": 0o755, "bin/stop.sh": 0o755, "bin/healthcheck": 0o755,
         "config/secret.env": 0o600, "config/app.conf": 0o644, "private/server.key": 0o600,
         "www/index.html": 0o644, "www/style.css": 0o644}
DIRS = {".": 0o755, "bin": 0o755, "config": 0o755, "private": 0o700, "www": 0o755}
CONTENT = {"bin/start.sh": "#!/bin/sh\necho starting\n", "config/secret.env": "DB_PASSWORD=hunter2\nAPI_KEY=abc123\n",
           "private/server.key": "-----BEGIN KEY-----\nMIIB\n-----END KEY-----\n"}


@check("file-modes")
def test_file_modes():
    wrong = {rel: oct(fs_state.mode("deploy/" + rel)) for rel, m in FILES.items() if fs_state.mode("deploy/" + rel) != m}
    assert not wrong, wrong


@check("dir-modes")
def test_dir_modes():
    wrong = {rel: oct(fs_state.mode("deploy/" + rel)) for rel, m in DIRS.items() if fs_state.mode("deploy/" + rel) != m}
    assert not wrong, wrong


@check("contents-kept", kind="collateral")
def test_contents():
    assert sorted(fs_state.listing("deploy")) == sorted(list(FILES) + [d for d in DIRS if d != "."])
    for rel, text in CONTENT.items():
        assert fs_state.read_text("deploy/" + rel) == text, rel
