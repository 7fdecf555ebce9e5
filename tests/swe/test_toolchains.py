"""The toolchain table and the `envhub toolchains` sub-app."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from environments.swe import toolchains
from environments.swe.cli import toolchains_app as app


def test_table_covers_18_languages_with_known_formats():
    from verifiers.swe_reports import PARSERS

    assert len(toolchains.TOOLCHAINS) == 18
    assert all(t.report in PARSERS and t.apt and t.check for t in toolchains.TOOLCHAINS.values())


def test_list_json_reports_python():
    out = CliRunner().invoke(app, ["list", "--json", "python"])
    assert out.exit_code == 0, out.output
    [row] = json.loads(out.output)
    assert row["language"] == "python" and row["present"] == toolchains.status("python").present
    assert set(row["packages"]) == {"python3", "python3-pytest"}


def test_install_dry_run_lists_sizes():
    out = CliRunner().invoke(app, ["install", "--dry-run", "c"])
    assert out.exit_code == 0 and "MiB" in out.output and "cmake" in out.output


def test_unknown_language_is_refused():
    with pytest.raises(ValueError, match="unknown language"):
        toolchains.resolve(["cobol"])
    assert CliRunner().invoke(app, ["list", "cobol"]).exit_code != 0


def test_plan_counts_dependencies_and_download_size():
    """apt's simulation (nothing installed): the packages with their dependencies, bytes to fetch."""
    if toolchains.installed(["cowsay"])["cowsay"]:
        pytest.skip("cowsay is installed here; the plan needs a package that is not")
    todo = toolchains.plan(["cowsay"])
    assert "cowsay" in todo.packages and todo.download_bytes > 0
    with pytest.raises(RuntimeError, match="envhub-no-such-package"):
        toolchains.plan(["envhub-no-such-package"])


def test_install_is_idempotent_and_says_so():
    if not all(toolchains.installed(["python3", "python3-pytest"]).values()):
        pytest.skip("python's toolchain is not installed here (this test must not install it)")
    out = CliRunner().invoke(app, ["install", "python"])
    assert out.exit_code == 0 and "all 2 packages installed" in out.output, out.output


def test_a_check_leaves_no_file_in_the_callers_directory(tmp_path, monkeypatch):
    """A toolchain check runs in a throwaway directory: erl, whose output pipe closes early, writes
    erl_crash.dump into its working directory (one was found in the repository root)."""
    monkeypatch.chdir(tmp_path)
    code, _ = toolchains._sh("echo dump > erl_crash.dump && pwd")
    assert code == 0 and list(tmp_path.iterdir()) == []
