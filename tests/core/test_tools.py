"""Tool declarations: the schema the agent sees and the check the server runs come from one place
and agree; the bounds hold even where a declaration says nothing."""

from __future__ import annotations

import copy
import os

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envhub import families
from envhub.tools import InvalidArguments, Param, Tool, check_object
from tests.core.test_tool_fuzz import arguments, broken

EXAMPLES = 150 if os.environ.get("ENVHUB_FUZZ") == "long" else 20  # per tool (about 200 tools)
#: Rules JSON Schema cannot carry; the check adds them (and says so in its message).
EXTRA_RULES = ("Unicode", "NUL", "must lie between", "not a calendar", "decimal places",
               "nested deeper",  # free-form values are bounded in depth; their schema is `{}`
               "finite")  # JSON has no NaN; Python's json reads it, and every bound compares False with it


def all_tools() -> list[Tool]:
    from environments.db import domains
    from environments.echo.env import TOOLS as ECHO
    from environments.office.tools import TOOLS as OFFICE
    from environments.swe.tools import DECLARED as SWE
    from environments.terminal.env import TOOLS as TERMINAL

    db = {t.name: t for d in domains.domains().values() for t in d.tools}
    return [*db.values(), *OFFICE, *SWE, *TERMINAL, *ECHO]


TOOLS = all_tools()


def test_every_family_tool_is_a_declaration() -> None:
    """Registry specs and live sessions come from `Tool` declarations in every family."""
    declared = {t.name for t in TOOLS}
    for name, family in families.load().items():
        assert {s.name for s in family.tool_specs()} <= declared, name


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_each_schema_is_valid_json_schema(tool: Tool) -> None:
    jsonschema.Draft202012Validator.check_schema(tool.spec().input_schema)


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_the_check_and_the_advertised_schema_agree(tool: Tool) -> None:
    validator = jsonschema.Draft202012Validator(tool.spec().input_schema)

    @settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(args=st.one_of(arguments(tool.params), broken(tool.params)))
    def agree(args: dict) -> None:
        by_schema = validator.is_valid(args)
        try:
            tool.check(args)
            by_check, why = True, ""
        except InvalidArguments as e:
            by_check, why = False, e.rule
        if by_schema and not by_check:
            assert any(r in why for r in EXTRA_RULES), f"schema accepts, check rejects: {why} for {args!r}"
        assert not (by_check and not by_schema), f"check accepts what the schema forbids: {args!r}"

    agree()


@pytest.mark.parametrize(("param", "value", "rule"), [
    (Param("integer"), 10**30, "at most 2147483647"),
    (Param("integer"), True, "expected an integer"),
    (Param("number"), float("inf"), "finite"),
    (Param("number"), float("nan"), "finite"),
    (Param("number"), 1e30, "at most"),
    (Param("number", decimals=2), 1.005, "2 decimal places"),
    (Param("string"), "a\ud800", "lone surrogate"),
    (Param("string"), "a\x00", "NUL"),
    (Param("string", max_len=3), "abcd", "at most 3 characters"),
    (Param("string", format="date"), "9999-12-31", "must lie between"),
    (Param("string", format="date"), "2025-02-30", "not a calendar date"),
    (Param("string", format="date-time"), "9999-12-31T23:59", "must lie between"),
    (Param("string", enum=("a", "b")), "c", "must be one of"),
    (Param("array", items=Param("integer"), max_items=2), [1, 2, 3], "at most 2 items"),
    (Param("any"), {"k": [[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]}, "nested deeper"),
    (Param("any"), {"\ud800": 1}, "lone surrogate"),
])
def test_bounds_hold_where_a_declaration_says_nothing(param: Param, value, rule: str) -> None:
    with pytest.raises(InvalidArguments, match=rule) as e:
        check_object({"x": param}, {"x": value})
    e.value.detail.encode("utf-8")  # the message itself always encodes


def test_checked_arguments_are_normalised() -> None:
    params = {"n": Param("integer"), "mode": Param("string", required=False, default="create"),
              "opt": Param("string", required=False)}
    assert check_object(params, {"n": 3.0}) == {"n": 3, "mode": "create"}
    assert check_object(params, {"n": 3, "opt": None}) == {"n": 3, "mode": "create"}  # null reads as absent
    with pytest.raises(InvalidArguments, match="'n': is required"):
        check_object(params, {})
    with pytest.raises(InvalidArguments, match="is not a parameter"):
        check_object(params, {"n": 1, "N": 2})


def test_arguments_that_pass_as_they_are_come_back_as_the_callers_own() -> None:
    """The check hands back the caller's dict when it changes nothing (the session manager then passes
    the agent's call on without building another), and a new one whenever it changes anything."""
    params = {"n": Param("integer"), "mode": Param("string", required=False, default="create"),
              "opt": Param("string", required=False),
              "at": Param("object", required=False, properties={"row": Param("integer")})}
    given = {"n": 3, "mode": "edit", "at": {"row": 1}}
    assert check_object(params, given) is given
    for args, checked in [
        ({"n": 3.0, "mode": "edit"}, {"n": 3, "mode": "edit"}),  # 3.0 as 3
        ({"n": 3, "mode": "edit", "at": {"row": 2.0}}, {"n": 3, "mode": "edit", "at": {"row": 2}}),  # nested
        ({"n": 3}, {"n": 3, "mode": "create"}),  # a default filled in
        ({"n": 3, "mode": "edit", "opt": None}, {"n": 3, "mode": "edit"}),  # a null dropped
        ({"n": 3, "opt": None}, {"n": 3, "mode": "create"}),  # both: as many keys as given
    ]:
        kept = copy.deepcopy(args)
        out = check_object(params, args)
        assert out is not args and out == checked
        assert [type(v) for v in out.values()] == [type(v) for v in checked.values()]
        assert args == kept and [type(v) for v in args.values()] == [type(v) for v in kept.values()]  # untouched


def test_nested_errors_name_the_path() -> None:
    params = {"items": Param("array", items=Param("object", properties={"qty": Param("integer", minimum=1)}))}
    with pytest.raises(InvalidArguments, match=r"'items\[1\]\.qty': must be at least 1"):
        check_object(params, {"items": [{"qty": 2}, {"qty": 0}]})


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "gemini", "mcp"])
def test_one_declaration_in_every_providers_format(fmt: str) -> None:
    from envhub.tools import as_format

    specs = [t.spec() for t in TOOLS]
    out = as_format(specs, fmt)
    assert len(out) == len(specs)
    first = {"openai": lambda d: d["function"]["parameters"], "anthropic": lambda d: d["input_schema"],
             "gemini": lambda d: d["parameters"], "mcp": lambda d: d["inputSchema"]}[fmt]
    for spec, entry in zip(specs, out, strict=True):
        schema = first(entry)
        if fmt == "gemini":  # Gemini's schema subset: upper-case types, no keywords it rejects
            text = str(schema)
            assert "additionalProperties" not in text and "exclusiveMinimum" not in text
            assert schema["type"] == "OBJECT"
            for p in schema["properties"].values():
                assert p.get("type", "STRING").isupper() or "anyOf" in p
        else:
            assert schema == spec.input_schema


def test_a_task_shows_its_own_tools_not_the_familys() -> None:
    from envhub.config import REPO_ROOT
    from envhub.tasks.catalog import Catalog

    db = families.load(["db"])["db"]
    task = Catalog(REPO_ROOT / "tasks").get("db/bank/ask-balance-001")
    own = {t.name for t in db.task_tool_specs(task)}
    assert "get_account" in own and "get_employee" not in own  # the bank's tools, not HR's
    assert own < {t.name for t in db.tool_specs()}
