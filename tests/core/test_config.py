from envhub.config import Settings


def test_settings_read_a_comma_separated_family_list(monkeypatch):
    monkeypatch.setenv("ENVHUB_FAMILIES", "echo, terminal")
    assert Settings().families == ["echo", "terminal"]


def test_settings_read_a_json_family_list(monkeypatch):
    monkeypatch.setenv("ENVHUB_FAMILIES", '["terminal", "db"]')
    assert Settings().families == ["terminal", "db"]


def test_the_suite_runs_in_a_data_folder_of_its_own():
    """Tests never write episodes into the user's store (tests/conftest.py sets the folder)."""
    import os
    from pathlib import Path

    from envhub.config import get_settings

    data_dir = get_settings().data_dir
    assert data_dir == Path(os.environ["ENVHUB_DATA_DIR"]) and data_dir.name.startswith("envhub-tests-")
    assert "ENVHUB_DATABASE_URL" not in os.environ and get_settings().store_path.is_relative_to(data_dir)


def test_one_episode_store_per_project_in_a_data_folder(tmp_path):
    a, b = tmp_path / "a" / "tasks", tmp_path / "b" / "tasks"
    store_a = Settings(data_dir=tmp_path / "data", tasks_dir=a).store_path
    assert store_a == Settings(data_dir=tmp_path / "data", tasks_dir=a).store_path
    assert store_a != Settings(data_dir=tmp_path / "data", tasks_dir=b).store_path
    assert store_a.parent == tmp_path / "data" / "episodes" and store_a.name.startswith("a-")
    assert Settings(data_dir=tmp_path / "data", tasks_dir=a).store_url == f"sqlite:///{store_a}"
    pg = Settings(database_url="postgresql://envhub:secret@db/envhub")
    assert pg.store_url.endswith("@db/envhub") and "secret" not in pg.store_label()


def test_serve_prints_its_store_path_at_start():
    import subprocess
    import sys

    from envhub.config import get_settings
    from envhub.server.thread import free_port

    proc = subprocess.Popen([sys.executable, "-m", "envhub.cli", "serve", "--env", "echo", "--port", str(free_port())],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        first = proc.stdout.readline()  # type: ignore[union-attr]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert first.strip() == f"episode store: {get_settings().store_path}"


def test_a_family_reads_its_own_settings_under_the_old_variable_names(monkeypatch) -> None:
    """Family settings live with the family (`Family.settings_class`), env var names unchanged; a
    value given to the core `Settings` by name overrides the variable (tests and embedders do that)."""
    from environments.db import DbFamily
    from environments.office import OfficeFamily
    from environments.swe.family import SweFamily

    monkeypatch.setenv("ENVHUB_DB_FAMILY_URL", "postgresql://from-env/db")
    monkeypatch.setenv("ENVHUB_JUDGE_URL", "http://judge.local/v1")
    monkeypatch.setenv("ENVHUB_OFFICE_LO_WORKERS", "3")
    monkeypatch.setenv("ENVHUB_SWE_RUNS", "2")
    core = Settings()
    assert DbFamily.settings(core).db_family_url == "postgresql://from-env/db"
    office = OfficeFamily.settings(core)
    assert (office.judge_url, office.office_lo_workers) == ("http://judge.local/v1", 3)
    assert SweFamily.settings(core).swe_runs == 2
    given = Settings(db_family_url="postgresql://given/db")
    assert DbFamily.settings(given).db_family_url == "postgresql://given/db"
    assert DbFamily.settings(core.model_copy(update={"db_family_url": None})).db_family_url is None
    assert not hasattr(core, "db_family_url") and "judge_url" not in Settings.model_fields  # not the core's
