from verifiers import check, fs_state

WANT = ["APP_ENV=production", "CACHE_TTL=300", "DB_URL=postgres://localhost/app?sslmode=disable", "FEATURE_X=on",
        "LOG_LEVEL=debug", "PORT=9090"]


@check("merged")
def test_merged():
    assert [ln for ln in fs_state.read_lines(".env") if ln.strip()] == WANT


@check("inputs-kept", kind="collateral")
def test_inputs():
    assert fs_state.read_text("defaults.env").startswith("APP_ENV=production\nPORT=8080\n")
    assert fs_state.read_text("overrides.env").startswith("LOG_LEVEL=debug\nPORT=9090\n")
