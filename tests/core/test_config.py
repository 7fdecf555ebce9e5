from envhub.config import Settings


def test_settings_read_a_comma_separated_family_list(monkeypatch):
    monkeypatch.setenv("ENVHUB_FAMILIES", "echo, terminal")
    assert Settings().families == ["echo", "terminal"]


def test_settings_read_a_json_family_list(monkeypatch):
    monkeypatch.setenv("ENVHUB_FAMILIES", '["terminal", "db"]')
    assert Settings().families == ["terminal", "db"]
