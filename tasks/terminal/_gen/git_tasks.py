"""Repositories shipped as git bundles (a nested .git cannot be committed) for the git tasks."""
import json
import shutil
import tempfile
from pathlib import Path

from common import fresh_state, git, rng, task_dir


def new_repo() -> Path:
    d = Path(tempfile.mkdtemp(prefix="gen-repo-"))
    git(d, "init", "-q")
    return d


def commit(repo: Path, files: dict[str, str], msg: str, n: int, delete: tuple[str, ...] = ()) -> str:
    for rel, text in files.items():
        p = repo / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    for rel in delete:
        (repo / rel).unlink()
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", msg, date=f"2024-03-{1 + n // 24:02d}T{n % 24:02d}:00:00Z")
    return git(repo, "rev-parse", "HEAD").strip()


def bundle(repo: Path, name: str, *refs: str) -> None:
    state = fresh_state(name)
    git(repo, "bundle", "create", str(state / "repo.bundle"), *(refs or ("--all",)))
    shutil.rmtree(repo)


# -- git-commit-fix -------------------------------------------------------------------------
repo = new_repo()
commit(repo, {"README.md": "# hello\n", "greeting.txt": "Hello, world\n"}, "Initial commit", 0)
commit(repo, {"greeting.txt": "Helo, world!\nHave a nice day.\n"}, "Add more greeting", 1)
head = commit(repo, {"src/main.sh": "#!/bin/sh\ncat greeting.txt\n"}, "Add main script", 2)
bundle(repo, "git-commit-fix", "main")
(task_dir("git-commit-fix") / "tests" / "expected.json").write_text(json.dumps({"base": head}) + "\n")

# -- git-find-commit -------------------------------------------------------------------------
r = rng("git-find-commit")
repo = new_repo()
settings = ["[app]", "name=shop", "DEBUG=false", "workers=2", ""]
culprit = None
for n in range(40):
    files = {f"src/module{n % 7}.py": f"# revision {n}\nVALUE = {r.randint(0, 999)}\n"}
    msg = r.choice(["Refactor module", "Tweak value", "Update docs", "Fix typo", "Bump workers"]) + f" ({n})"
    if n == 11:
        settings[3] = "workers=4"
        files["config/settings.ini"] = "\n".join(settings)
    if n == 17:
        settings[2] = "DEBUG=true"
        files["config/settings.ini"] = "\n".join(settings)
        msg = "Tune worker settings"
    if n == 25:
        files["docs/debugging.md"] = "Set DEBUG=true in config/settings.ini to debug.\n"
    if n == 0:
        files["config/settings.ini"] = "\n".join(settings)
    h = commit(repo, files, msg, n)
    if n == 17:
        culprit = h
bundle(repo, "git-find-commit", "main")
(task_dir("git-find-commit") / "tests" / "expected.json").write_text(json.dumps({"culprit": culprit}) + "\n")

# -- git-merge-conflict ------------------------------------------------------------------------
repo = new_repo()
cfg = "service: api\ntimeout: 30\nlog_level: info\n"
commit(repo, {"config.yaml": cfg, "README.md": "# api\n", "app.py": "print('api')\n"}, "Initial", 0)
git(repo, "checkout", "-q", "-b", "feature/retry")
commit(repo, {"config.yaml": "service: api\ntimeout: 60\nretries: 3\nlog_level: info\n"}, "Add retries", 1)
feature = commit(repo, {"retry.py": "def retry(f, n=3):\n    return f()\n"}, "Add retry helper", 2)
git(repo, "checkout", "-q", "main")
commit(repo, {"config.yaml": "service: api\ntimeout: 45\nlog_level: warning\n"}, "Quieter logs", 3)
main = commit(repo, {"CHANGELOG.md": "- quieter logs\n"}, "Changelog", 4)
bundle(repo, "git-merge-conflict", "main", "feature/retry")
(task_dir("git-merge-conflict") / "tests" / "expected.json").write_text(
    json.dumps({"main": main, "feature": feature}) + "\n")

# -- release-pipeline ----------------------------------------------------------------------------
repo = new_repo()
commit(repo, {
    "VERSION": "1.2.0\n",
    "README.md": "# greet\n\nPrints a greeting. `make` builds `bin/greet`.\n",
    "CHANGELOG.md": "# Changelog\n\n## Unreleased\n\n- add `--shout`\n- fix exit status on bad flags\n\n"
                    "## 1.2.0 - 2024-02-01\n\n- first public release\n",
    "src/greet.c": '#include <stdio.h>\n#include <string.h>\n#include <ctype.h>\n'
                   'int main(int argc, char **argv) {\n'
                   '    if (argc > 1 && !strcmp(argv[1], "--version")) { printf("greet %s\\n", VERSION); return 0; }\n'
                   '    if (argc > 1 && !strcmp(argv[1], "--shout")) { puts("HELLO!"); return 0; }\n'
                   '    if (argc > 1) { fprintf(stderr, "unknown flag %s\\n", argv[1]); return 1; }\n'
                   '    puts("hello"); return 0;\n}\n',
    "Makefile": 'VERSION := $(shell cat VERSION)\n\nbin/greet: src/greet.c VERSION\n\tmkdir -p bin\n'
                '\t$(CC) -O2 -Wall -DVERSION=\'"$(VERSION)"\' -o $@ src/greet.c\n\n'
                'clean:\n\trm -rf bin\n\n.PHONY: clean\n',
    ".gitignore": "bin/\n",
}, "greet 1.2.0", 0)
git(repo, "tag", "-a", "v1.2.0", "-m", "greet 1.2.0", date="2024-02-01T00:00:00Z")
head = commit(repo, {"src/greet.c": (repo / "src/greet.c").read_text().replace("return 1;", "return 2;")},
              "Fix exit status on bad flags", 1)
bundle(repo, "release-pipeline", "main", "v1.2.0")
(task_dir("release-pipeline") / "tests" / "expected.json").write_text(json.dumps({"base": head}) + "\n")
