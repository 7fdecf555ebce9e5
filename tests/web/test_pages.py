"""The registry browser in-process: content, filters, escaping, paging, 404s and hostile query strings."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from envhub.config import Settings
from envhub.server.app import create_app
from tests.web.conftest import HIDDEN_MARKERS, HTML_PROMPT

LONG = 230  # steps in the long episode: five pages of 50


@pytest.fixture(scope="module")
def client(data_dir: Path, tasks_dir: Path) -> Iterator[TestClient]:
    settings = Settings(data_dir=data_dir, tasks_dir=tasks_dir, families=["echo"])
    # Sessions belong to their caller (docs/security.md): one client token for this module's calls.
    with TestClient(create_app(settings), headers={"Authorization": "Bearer web-tests-client-token"}) as c:
        c.settings = settings  # type: ignore[attr-defined]
        yield c


def episode(client: TestClient, task: str, messages: list[str], verify: bool = True) -> str:
    r = client.post("/v1/sessions", json={"env": "echo", "task_id": task, "policy_version": "pol-<1>"})
    assert r.status_code == 201, r.text
    sid = r.json()["session_id"]
    for m in messages:
        assert client.post(f"/v1/sessions/{sid}/step", json={"action": {"tool": "echo",
                                                                         "arguments": {"message": m}}}).status_code == 200
    if verify:
        assert client.post(f"/v1/sessions/{sid}/verify", json={}).status_code == 200
    assert client.delete(f"/v1/sessions/{sid}").status_code == 204
    return sid


@pytest.fixture(scope="module")
def episodes(client: TestClient, recorded) -> dict[str, str]:
    ids = {"ok": episode(client, "echo/say-done", ["done"]),
           "html": episode(client, "echo/html-prompt", ['<img src=x onerror=alert(1)>', "done"]),
           "long": episode(client, "echo/html-prompt", [f"line {i}" for i in range(1, LONG + 1)], verify=False)}
    url = client.settings.store_url  # type: ignore[attr-defined]
    recorded(url, ids["ok"], steps=1)
    recorded(url, ids["html"], steps=2)
    recorded(url, ids["long"], steps=LONG, verified=False)
    return ids


def html(client: TestClient, url: str, status: int = 200) -> str:
    r = client.get(url)
    assert r.status_code == status, (url, r.status_code, r.text[:500])
    assert r.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in r.headers["content-security-policy"]
    assert "Traceback" not in r.text
    return r.text


def test_index_shows_envs_with_counts_and_health(client: TestClient, episodes: dict[str, str]) -> None:
    page = html(client, "/")
    api = {e["name"]: e for e in client.get("/v1/envs").json()["envs"]}
    assert list(api) == ["echo"]
    card = page.split('data-env="echo"', 1)[1]
    assert f'class="task-count" href="/tasks?env=echo">{api["echo"]["task_count"]}</a>' in card
    assert re.search(r'data-status="unvalidated">1 unvalidated', card)
    assert 'class="episode-count" href="/episodes?env=echo">3</a>' in card
    assert "<svg" in card  # reward and outcome charts


def test_task_filters(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """Filters are the served families' facets (`Family.facet_labels`); echo declares none, so
    the test lends it two to filter the fixture task's metadata by."""
    from environments.echo import EchoFamily

    monkeypatch.setattr(EchoFamily, "facet_labels", {"language": "language", "task_type": "task type"})

    def listed(query: str) -> list[str]:
        return re.findall(r'<tr data-task="([^"]+)"', html(client, "/tasks" + query))

    assert listed("") == ["echo/html-prompt", "echo/say-done"]
    assert listed("?q=script") == ["echo/html-prompt"]  # text search reaches the prompt
    assert listed("?difficulty=hard") == ["echo/html-prompt"]
    assert listed("?task_type=escaping") == ["echo/html-prompt"]
    assert listed("?language=%3Cu%3Ehtml%3C%2Fu%3E") == ["echo/html-prompt"]
    assert listed("?task_type=finance") == []
    assert listed("?env=terminal") == []
    api = [t["id"] for t in client.get("/v1/tasks", params={"validation": "unvalidated"}).json()["tasks"]]
    assert listed("?validation=unvalidated") == api


@pytest.mark.parametrize("query", [
    "?q=%27%20OR%201%3D1%20--", "?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E", "?env=%22%3E%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E",
    "?page=-1%3B%20DROP%20TABLE%20episodes", "?page=99999999999999999999999", "?validation=validated%27--",
    "?difficulty[]=1&difficulty=2", "?q=" + "A" * 5000, "?%00=%00", "?q=%E2%80%AE%F0%9F%92%A3",
])
def test_hostile_task_queries_are_data(client: TestClient, episodes: dict[str, str], query: str) -> None:
    page = html(client, "/tasks" + query)
    assert "<script>alert(1)" not in page and "<img src=x" not in page
    assert html(client, "/episodes" + query.replace("q=", "task="))
    # nothing was dropped or altered: the store still lists every episode
    assert 'data-total="3"' in html(client, "/episodes")


def test_sql_injection_in_episode_filter_matches_nothing(client: TestClient, episodes: dict[str, str]) -> None:
    assert 'data-total="0"' in html(client, "/episodes?task=%27%20OR%20%271%27%3D%271")
    assert 'data-total="0"' in html(client, "/episodes?outcome=ok%27%20OR%201%3D1--")
    assert 'data-total="2"' in html(client, "/episodes?task=echo/html-prompt")


@pytest.mark.parametrize("url", ["/tasks/echo/nope", "/tasks/..%2F..%2Fetc%2Fpasswd", "/tasks/%3Cscript%3E",
                                 "/episodes/nope", "/episodes/%27%20OR%201%3D1", "/envs/nope"])
def test_unknown_things_are_a_404_page(client: TestClient, url: str) -> None:
    page = html(client, url, status=404)
    assert 'id="not-found"' in page and "<script>" not in page


def test_html_in_prompt_title_and_metadata_is_escaped(client: TestClient, episodes: dict[str, str]) -> None:
    page = html(client, "/tasks/echo/html-prompt")
    assert "<script>alert" not in page and "<b>done</b>" not in page and "<u>html</u>" not in page
    assert "Say &lt;script&gt;alert(&#34;xss&#34;)&lt;/script&gt; &amp; &lt;b&gt;done&lt;/b&gt;." in page
    assert "Prompt with &lt;i&gt;HTML&lt;/i&gt;" in page
    assert client.get("/v1/tasks/echo/html-prompt").json()["prompt"] == HTML_PROMPT


def test_html_in_observations_is_escaped(client: TestClient, episodes: dict[str, str]) -> None:
    page = html(client, f"/episodes/{episodes['html']}")
    assert "<img src=x" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "pol-&lt;1&gt;" in page
    assert 'data-check="said-done"' in page and 'id="episode-reward">1</dd>' in page


def test_hidden_task_files_are_never_shown(client: TestClient, episodes: dict[str, str]) -> None:
    pages = [html(client, u) for u in ("/", "/tasks", "/tasks/echo/html-prompt", "/tasks/echo/say-done",
                                       "/envs/echo", f"/episodes/{episodes['html']}")]
    for marker in HIDDEN_MARKERS:
        assert not any(marker in p for p in pages)
    assert "@check(" not in pages[2] and "messages.json" not in pages[2]


def test_long_trajectory_is_paged(client: TestClient, episodes: dict[str, str]) -> None:
    base = f"/episodes/{episodes['long']}"

    def steps(query: str) -> list[int]:
        return [int(n) for n in re.findall(r'<li class="step [^"]*" id="step-(\d+)"', html(client, base + query))]

    first = html(client, base)
    assert "page 1 of 5 (230)" in first and 'id="episode-steps">230</dd>' in first
    assert steps("") == list(range(1, 51))
    assert steps("?page=5") == list(range(201, 231))
    assert steps("?step=120") == list(range(101, 151))
    assert steps("?page=99") == []  # past the end: an empty page, not an error
    assert steps("?page=abc") == list(range(1, 51))


def test_task_page_shows_latency_and_validation(client: TestClient, episodes: dict[str, str]) -> None:
    page = html(client, "/tasks/echo/say-done")
    row = page.split('<tr data-op="reset">', 1)[1].split("</tr>", 1)[0]
    assert "<td class=\"num\">1</td>" in row  # one recorded episode
    assert 'id="check-groups"' in page and "oracle" in page  # the copied validation record
    assert page.count("<svg") >= 5  # reward, outcome mix, three latency histograms


def test_static_files_only_from_the_allowlist(client: TestClient) -> None:
    assert client.get("/static/app.js").status_code == 200
    assert client.get("/static/..%2F..%2Fconfig.py").status_code == 404
    assert client.get("/static/views.py").status_code == 404


STRANGER = {"Authorization": "Bearer web-tests-second-tenant-0"}


@pytest.mark.parametrize("headers", [STRANGER, {"Authorization": ""}], ids=["second-tenant", "no-credential"])
def test_another_reader_sees_the_counts_and_nothing_else(client: TestClient, episodes: dict[str, str],
                                                         headers: dict[str, str]) -> None:
    """A second tenant (or a browser without a credential) gets the replay page as a 404, lists none
    of the owner's episodes and links none, but reads the same counts, charts and latencies."""
    for sid in episodes.values():
        page = client.get(f"/episodes/{sid}", headers=headers)
        assert page.status_code == 404 and 'id="not-found"' in page.text
        assert "onerror" not in page.text and "pol-" not in page.text
    listing = client.get("/episodes", headers=headers).text
    assert 'data-total="0"' in listing and 'data-everyone="3"' in listing
    pages = {u: client.get(u, headers=headers).text for u in ("/", "/envs/echo", "/tasks/echo/say-done", "/episodes")}
    for url, text in pages.items():
        assert not any(sid in text for sid in episodes.values()), url  # no episode is linked
        assert "pol-&lt;1&gt;" not in text, url  # nor its policy
    assert 'class="episode-count" href="/episodes?env=echo">3</a>' in pages["/"]  # the counts stay
    row = pages["/tasks/echo/say-done"].split('<tr data-op="reset">', 1)[1].split("</tr>", 1)[0]
    assert "<td class=\"num\">1</td>" in row


def test_a_system_runs_replay_keeps_its_actions_from_its_owner(client: TestClient, episodes: dict[str, str],
                                                               recorded) -> None:
    """An oracle run's page shows its owner the verdict and step count, never the actions."""
    r = client.post("/v1/sessions", json={"env": "echo", "task_id": "echo/say-done", "policy_version": "envhub:oracle"})
    sid = r.json()["session_id"]
    secret = "ORACLE-ANSWER-done"
    client.post(f"/v1/sessions/{sid}/step", json={"action": {"tool": "echo", "arguments": {"message": secret}}})
    client.post(f"/v1/sessions/{sid}/verify", json={})
    client.delete(f"/v1/sessions/{sid}")
    recorded(client.settings.store_url, sid, steps=1)  # type: ignore[attr-defined]
    page = html(client, f"/episodes/{sid}")
    assert 'id="actions-hidden"' in page and secret not in page and 'id="episode-steps">1</dd>' in page
    api = client.get(f"/v1/episodes/{sid}").json()
    assert api["step_count"] == 1 and api["steps"] == [] and secret not in str(api)
