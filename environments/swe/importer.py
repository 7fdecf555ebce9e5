"""Import SWE-bench-format instances (JSON or JSONL) from a local git repository as SWE tasks.

Each instance gives `instance_id`, `base_commit`, `patch` (the gold fix), `test_patch`,
`problem_statement` and `FAIL_TO_PASS` / `PASS_TO_PASS` (lists, or JSON-encoded lists as
SWE-bench stores them). The repository must hold every base commit; nothing is fetched. The
toolchain, test command and report format are the caller's, because SWE-bench instances do not
carry them in a runnable form. Protected paths default to the files the test patch touches.
The imported tasks are unvalidated until `envhub validate` accepts them.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from environments.swe.authoring import write_task_files
from environments.swe.repo import git
from environments.swe.toolchains import TOOLCHAINS
from environments.swe.validate import patch_paths
from envhub.tasks.model import short_title
from verifiers.swe_reports import PARSERS

_NAME = re.compile(r"[^a-zA-Z0-9_.+-]+")


def load_instances(path: Path) -> list[dict[str, Any]]:
    """Instances from a JSON list, a single JSON object or JSONL."""
    text = path.read_text(encoding="utf-8").strip()
    if not text:
        return []
    if text[0] == "[":
        data = json.loads(text)
    elif text[0] == "{" and "\n{" not in text:
        data = [json.loads(text)]
    else:
        data = [json.loads(line) for line in text.splitlines() if line.strip()]
    for inst in data:
        missing = [k for k in ("instance_id", "base_commit", "patch", "test_patch", "problem_statement",
                               "FAIL_TO_PASS", "PASS_TO_PASS") if k not in inst]
        if missing:
            raise ValueError(f"instance {inst.get('instance_id', '?')}: missing {', '.join(missing)}")
    return data


def _ids(value: Any) -> list[str]:
    if isinstance(value, str):
        value = json.loads(value)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("FAIL_TO_PASS / PASS_TO_PASS must be lists of strings")
    return list(value)


def task_name(instance_id: str) -> str:
    return _NAME.sub("-", instance_id).strip("-").lower()[:100]


def import_swebench(instances: Path, repo: Path, dest_root: Path, language: str, test_command: str,
                    report_format: str, *, report_file: str = "junit.xml", build: str = "",
                    env: dict[str, str] | None = None, protected_paths: list[str] | None = None,
                    toolchain: dict[str, Any] | None = None, limits: dict[str, Any] | None = None,
                    difficulty: str = "medium") -> list[Path]:
    """Write one task folder per instance under `dest_root/<language>/`; returns the folders."""
    if report_format not in PARSERS:
        raise ValueError(f"unknown report format {report_format!r}; known: {', '.join(PARSERS)}")
    if toolchain is None:
        tc = TOOLCHAINS.get(language)
        toolchain = {"apt": list(tc.apt), "check": tc.check} if tc else {"apt": [], "check": ""}
    out: list[Path] = []
    for inst in load_instances(instances):
        f2p, p2p = _ids(inst["FAIL_TO_PASS"]), _ids(inst["PASS_TO_PASS"])
        name = task_name(inst["instance_id"])
        dest = dest_root / language / name
        work = Path(tempfile.mkdtemp(prefix="swe-import-"))
        try:
            clone = work / "repo"
            git("clone", "-q", "--no-checkout", str(repo.resolve()), str(clone))
            git("-c", "advice.detachedHead=false", "checkout", "-q", "--detach", inst["base_commit"], cwd=clone)
            protected = protected_paths if protected_paths is not None else patch_paths(inst["test_patch"])
            spec = {
                "id": f"swe/{language}/{name}", "family": "swe",
                "title": short_title((inst["problem_statement"].strip().splitlines() or [name])[0]) or name,
                "difficulty": difficulty, "tags": [language, "imported"],
                "limits": limits or {"step_timeout_s": 180, "verify_timeout_s": 600, "memory_mb": 4096},
                "metadata": {
                    "language": language, "bug_kind": inst.get("bug_kind", "logic"), "toolchain": toolchain,
                    **({"build": build} if build else {}), "test_command": test_command,
                    "report": {"format": report_format, "file": report_file}, "env": env or {},
                    "protected_paths": protected,
                    # where it came from (`source` names a factory task's pinned package)
                    "origin": {"swebench": inst["instance_id"], "repo": inst.get("repo", "")},
                },
            }
            write_task_files(dest, repo=clone, task_yaml=spec, prompt=inst["problem_statement"],
                             test_patch=inst["test_patch"], gold_patch=inst["patch"],
                             tests_json={"FAIL_TO_PASS": f2p, "PASS_TO_PASS": p2p})
        finally:
            shutil.rmtree(work, ignore_errors=True)
        out.append(dest)
    return out
