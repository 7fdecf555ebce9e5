"""The chat codec with a ChatML tokenizer (the torch-free one, and SmolLM2's real one where the rl
extra is installed) and its template (rl.md §6.4 rules 2-4)."""

from __future__ import annotations

import pytest

from envhub.errors import AgentError
from envhub.rl.codec import ChatCodec, format_call, parse_tool_call

TOOLS = [{"name": "search_accounts", "description": "Find accounts.",
          "inputSchema": {"type": "object", "properties": {"number": {"type": "string"}}}},
         {"name": "submit_answer", "description": "Answer.",
          "inputSchema": {"type": "object", "properties": {"answer": {"type": "string"}}}}]


@pytest.fixture(scope="module")
def codec(tokenizer) -> ChatCodec:
    return ChatCodec(tokenizer)


def enc(tok, text: str) -> list[int]:
    return tok.encode(text, add_special_tokens=False)


def test_separator_is_the_newline_after_im_end(codec, tokenizer) -> None:
    assert tokenizer.decode(codec.separator) == "\n"
    assert codec.closing([5, codec.eos_id]) == codec.separator
    assert codec.closing([5]) == [codec.eos_id, *codec.separator]  # cut for length: close the turn


def test_rule3_token_ids_equal_a_full_render(codec, tokenizer) -> None:
    """Canonical sampled ids ending in EOS: prompt + turns + observations == apply_chat_template."""
    prompt = "Look up the balance on account ACC-101961 and report it."
    call1 = format_call("search_accounts", {"number": "ACC-101961"})
    obs = '{"accounts": [{"number": "ACC-101961", "balance": 22806.26}]}'
    call2 = format_call("submit_answer", {"answer": "22806.26"})
    ids = codec.initial(prompt, TOOLS)
    g1 = enc(tokenizer, call1) + [codec.eos_id]
    ids += g1 + codec.closing(g1) + codec.observation(obs)
    g2 = enc(tokenizer, call2) + [codec.eos_id]
    ids += g2 + codec.closing(g2)
    messages = [*codec.initial_messages(prompt, TOOLS),
                {"role": "assistant", "content": call1}, {"role": "tool", "content": obs},
                {"role": "assistant", "content": call2}]
    golden = tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=False)
    golden = list(golden["input_ids"] if hasattr(golden, "keys") else golden)
    assert ids == golden
    # the observation segment starts with the separator token "\n"
    start = len(codec.initial(prompt, TOOLS)) + len(g1)
    assert tokenizer.decode([ids[start]]) == "\n"


def test_observation_is_a_suffix_render_not_isolated_tokenisation(codec, tokenizer) -> None:
    obs = codec.observation("hello world")
    assert tokenizer.decode(obs) == "<|im_start|>tool\nhello world<|im_end|>\n<|im_start|>assistant\n"


def test_noncanonical_ids_decode_but_do_not_reencode(tokenizer, noncanonical) -> None:
    """The premise of rule 2: some ids read "hello world", which encodes differently."""
    assert tokenizer.decode(noncanonical) == "hello world"
    assert enc(tokenizer, "hello world") != noncanonical


@pytest.mark.parametrize(("text", "tool", "args"), [
    ('<tool_call>\n{"name": "submit_answer", "arguments": {"answer": "5"}}\n</tool_call>', "submit_answer",
     {"answer": "5"}),
    ('Sure. <tool_call>{"name": "x", "arguments": "{\\"a\\": 1}"}</tool_call> and more', "x", {"a": 1}),
    ('{"name": "search_accounts", "arguments": {"number": "ACC-1"}}', "search_accounts", {"number": "ACC-1"}),
    ('I will call {"tool": "t", "arguments": {}} now', "t", {}),
    ('<tool_call>{"name": "t", "arguments": {}}', "t", {}),  # cut before the closing tag
])
def test_parse_tool_call(text: str, tool: str, args: dict) -> None:
    call = parse_tool_call(text)
    assert (call.tool, call.arguments) == (tool, args)


@pytest.mark.parametrize("text", ["", "the answer is 5", "<tool_call>{not json}</tool_call>", "[1, 2]",
                                  '{"arguments": {}}', '{"name": "t", "arguments": [1]}',
                                  '<tool_call>{"name": "t", "arguments": "nope"}</tool_call>'])
def test_malformed_tool_calls_are_agent_errors(text: str) -> None:
    with pytest.raises(AgentError):
        parse_tool_call(text)
