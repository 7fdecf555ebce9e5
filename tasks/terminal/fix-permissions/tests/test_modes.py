from verifiers import check, fs_state

FILES = {"bin/start.sh": 0o755, "bin/stop.sh": 0o755, "bin/healthcheck": 0o755,
         "config/secret.env": 0o600, "config/app.conf": 0o644, "private/server.key": 0o600,
         "www/index.html": 0o644, "www/style.css": 0o644}
DIRS = {".": 0o755, "bin": 0o755, "config": 0o755, "private": 0o700, "www": 0o755}
#: Every file's content as given (the task changes modes only).
SHA256 = {
    "bin/start.sh": "3486b4be3e3934edc02492b818fe4f7a51f9b6b06347b56e16d8d8ea25141142",
    "bin/stop.sh": "46afe9251fa214a976ea23e0094166dceb1f79f39ef879bd4cc3d59b26808059",
    "bin/healthcheck": "9a3d40a8415cec0919fdb8e907ed7910f129abb283fd8af4caa2dcec9401ff7b",
    "config/secret.env": "b8081fef019e5e9efa0eacfb875d78cbdd1e02ce32d8d530ef96464d869395a5",
    "config/app.conf": "815e849ba02977ac014b2cb0c09fb8396339e4d588e21a510d03449070efeebe",
    "private/server.key": "1f0b94965a0ac3140f30cf0d5b1298d2d466cd690cd21695343f7fb004293377",
    "www/index.html": "737e6daf77521604fc482aa91e8bed8c47f4815c624e61e49c45ecbb5832f708",
    "www/style.css": "2708d73bf31c36cdfa1aa466551ed101017280fa546caba4473cfef6e92a93b5",
}


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
    changed = [rel for rel, digest in SHA256.items() if fs_state.sha256("deploy/" + rel) != digest]
    assert not changed, f"contents changed: {changed}"
