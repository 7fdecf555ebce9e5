from pathlib import Path

from verifiers import check, fs_state

EDITS = {"worker_processes 1;": "worker_processes auto;",
         "    worker_connections 768;": "    worker_connections 2048;",
         "    # gzip on;": "    gzip on;",
         "    # gzip_types text/plain text/css application/json;": "    gzip_types text/plain text/css application/json;",
         "    # server_tokens off;": "    server_tokens off;"}
WANT = (Path(__file__).parent / "expected.conf").read_text().splitlines()


def lines() -> list[str]:
    return fs_state.read_text("etc/nginx/nginx.conf").splitlines()


@check("edits-made")
def test_edits():
    got = lines()
    for new in EDITS.values():
        assert new in got, new


@check("rest-unchanged", kind="collateral")
def test_rest():
    assert lines() == WANT
