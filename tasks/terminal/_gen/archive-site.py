"""A small static site with temporary files that must stay out of the backup."""
import json

from common import fresh_state, rng, task_dir

NAME = "archive-site"
r = rng(NAME)
state = fresh_state(NAME)
files = {"site/index.html": "<h1>Home</h1>\n", "site/about/index.html": "<h1>About</h1>\n",
         "site/css/main.css": "body { margin: 0 }\n", "site/js/app.js": "console.log('hi');\n",
         "site/img/logo.txt": "LOGO\n" * 40, "site/.htaccess": "Options -Indexes\n",
         "site/draft.tmp": "draft\n", "site/css/build.tmp": "tmp\n", "site/blog/2024/first-post.html": "<p>1</p>\n",
         "site/blog/2024/.cache.tmp": "x\n", "notes.txt": "remember to back up site/\n"}
for rel, text in files.items():
    p = state / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
expected = {rel: text for rel, text in files.items() if rel.startswith("site/") and not rel.endswith(".tmp")}
(task_dir(NAME) / "tests" / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
