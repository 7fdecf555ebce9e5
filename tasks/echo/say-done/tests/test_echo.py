import json

from verifiers import STATE, check


@check("said-done")
def test_said_done():
    messages = json.loads((STATE / "messages.json").read_text())
    assert "done" in messages, f"messages were {messages!r}"
