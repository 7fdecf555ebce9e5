"""`envhub.server.encoding.answer_json`: orjson writes the hot answers (`envhub.core.answers`), and it
must write exactly the text pydantic's `model_dump_json(by_alias=True)` writes for their wire models,
whatever an environment put in them."""

from __future__ import annotations

import dataclasses
import decimal
import enum
import uuid
from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, field_serializer

from envhub.core.answers import MODELS, ResetAnswer, StepAnswer, ToolList, answer_class
from envhub.errors import FailureClass
from envhub.server import encoding
from envhub.server.encoding import PLAIN_MODELS, _json_keys, answer_json
from envhub.spec import Observation, SessionCreated, StepResult, TaskRef, ToolSpec


class Colour(enum.Enum):
    RED = "red"
    ONE = 1


ZONES = [UTC, timezone(timedelta(0)), timezone(timedelta(hours=5, minutes=30)), timezone(-timedelta(hours=11)),
         timezone(timedelta(seconds=90)), ZoneInfo("Europe/Paris"), ZoneInfo("Europe/London"),
         ZoneInfo("Europe/Amsterdam"), None]  # Amsterdam before 1937: +00:19:32

# Values an environment may put in `Observation.data` or `StepResult.info`: JSON's, and those that
# either writer treats specially (times, enums, models) or that orjson refuses and pydantic takes.
scalars = (st.none() | st.booleans() | st.integers(min_value=-(2 ** 70), max_value=2 ** 70)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text()
           | st.builds(datetime.combine, st.dates(), st.times(), st.sampled_from(ZONES)) | st.dates() | st.times()
           | st.uuids() | st.sampled_from(list(Colour)) | st.text(max_size=8).map(str.encode)
           | st.decimals(allow_nan=False, places=3) | st.just(timedelta(seconds=3)))
models = st.builds(TaskRef, id=st.text(), prompt=st.text()) | st.builds(Observation, text=st.text())
values = st.recursive(scalars | models, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=6), inner, max_size=4)
                      | st.frozensets(st.integers(), max_size=3) | st.tuples(inner, inner), max_leaves=12)
data = st.dictionaries(st.text(max_size=8), values, max_size=5)


def pydantic_text(model: BaseModel) -> str:
    return model.model_dump_json(by_alias=True)


@settings(max_examples=300, deadline=None)
@given(text=st.text(), payload=data, info=data, step=st.integers(min_value=1, max_value=2 ** 40),
       failure=st.sampled_from(list(FailureClass)), reward=st.none() | st.floats())
def test_a_step_answer_is_written_as_pydantic_writes_it(text, payload, info, step, failure, reward) -> None:
    obs = Observation(text=text, data=payload, is_error=failure != FailureClass.ok)
    answer = StepAnswer(observation=obs, reward=reward, terminated=False, truncated=False, done=False, info=info,
                        failure=failure, trainable=failure.trainable, retryable=failure.retryable, step=step)
    model = answer.model()
    assert answer_json(answer) == answer_json(model) == pydantic_text(model)


@settings(max_examples=200, deadline=None)
@given(payload=data, schema=data, prompt=st.text(), when=st.datetimes(timezones=st.sampled_from(ZONES)),
       token=st.none() | st.text())
def test_a_reset_answer_is_written_as_pydantic_writes_it(payload, schema, prompt, when, token) -> None:
    answer = ResetAnswer(session_id="s", env="echo", observation=Observation(text=prompt, data=payload),
                         tools=ToolList([ToolSpec(name="echo", description="d", input_schema=schema)]),
                         task=TaskRef(id="echo/say-done", prompt=prompt), lease_expires_at=when, client_token=token)
    model = answer.model()
    assert answer_json(answer) == answer_json(model) == pydantic_text(model)


def test_a_tool_list_is_written_once_and_its_text_reused(monkeypatch) -> None:
    """A reset answer's tools are written on the first answer that lists them; later answers reuse that
    text (and a list whose first writing failed is written again, not kept broken)."""
    specs = [ToolSpec(name=f"t{i}", description="d", input_schema={"type": "object", "n": i}) for i in range(3)]
    tools = ToolList(specs)

    def answer(token: str | None) -> ResetAnswer:
        return ResetAnswer(session_id="s", env="db", observation=Observation(text="p"), tools=tools,
                           task=TaskRef(id="t", prompt="p"), lease_expires_at=datetime(2026, 12, 3, tzinfo=UTC),
                           client_token=token)

    first = answer_json(answer("a"))
    kept = tools.json
    assert kept is not None and first == pydantic_text(answer("a").model())
    written: list[object] = []
    real = encoding._plain_fields

    def counting(value):
        written.append(type(value))
        return real(value)

    monkeypatch.setattr(encoding, "_plain_fields", counting)
    assert answer_json(answer("b")) == pydantic_text(answer("b").model())
    assert tools.json is kept and ToolSpec not in written
    odd = ToolList([ToolSpec(name="x", description="d", input_schema={"ids": {1, 2}})])  # orjson refuses a set
    ans = dataclasses.replace(answer("c"), tools=odd)
    assert answer_json(ans) == pydantic_text(ans.model()) and odd.json is None


@pytest.mark.parametrize("answer", [StepAnswer, ResetAnswer])
def test_an_answer_has_its_wire_models_fields_in_its_order(answer) -> None:
    """orjson writes a dataclass's fields in their order: the same keys in the same order as the model."""
    model = MODELS[answer]
    assert [f.name for f in dataclasses.fields(answer)] == list(model.model_fields)
    defaults = {f.name: f.default for f in dataclasses.fields(answer) if f.default is not dataclasses.MISSING}
    assert defaults == {name: f.default for name, f in model.model_fields.items() if name in defaults}


def test_a_field_is_declared_once_on_the_wire_model_and_the_answer_and_its_json_follow() -> None:
    """Adding a field to the step answer is one line in `envhub.spec` (and where its value is set, if
    it has no default): the answer class is made from the model, and the socket's JSON carries it."""

    class WithCost(StepResult):
        cost_ms: float = 0.0
        shard: str | None = None

    answer_cls = answer_class("WithCostAnswer", WithCost, doc="")
    assert [f.name for f in dataclasses.fields(answer_cls)][-2:] == ["cost_ms", "shard"]
    answer = answer_cls(observation=Observation(text="hi"), reward=1.0, terminated=True, truncated=False,
                        done=True, step=3, cost_ms=2.5)
    assert isinstance(answer.model(), WithCost) and answer.model().cost_ms == 2.5
    assert answer_json(answer) == pydantic_text(answer.model())
    assert '"cost_ms":2.5,"shard":null' in answer_json(answer)


def test_the_hot_answers_take_the_orjson_path_and_anything_else_goes_to_pydantic(monkeypatch) -> None:
    """Equal texts alone would pass if every answer fell back to pydantic: check which writer ran."""
    calls: list[str] = []
    real = BaseModel.model_dump_json

    def spy(self, **kwargs):
        calls.append(type(self).__name__)
        return real(self, **kwargs)

    monkeypatch.setattr(BaseModel, "model_dump_json", spy)
    plain = StepAnswer(observation=Observation(text="hi", data={"n": 1}), reward=None, terminated=False,
                       truncated=False, done=False, info={"at": datetime(2026, 12, 2, tzinfo=UTC)},
                       failure=FailureClass.ok, trainable=True, retryable=False, step=1)
    assert answer_json(plain) == real(plain.model(), by_alias=True)
    assert calls == []
    with_set = dataclasses.replace(plain, info={"ids": {1, 2}})  # orjson refuses a set; pydantic writes a list
    assert answer_json(with_set) == real(with_set.model(), by_alias=True)
    assert calls == ["StepResult"]


def test_an_unencodable_string_still_becomes_escape_text() -> None:
    result = StepResult.model_construct(observation=Observation(text="ok"), reward=None, terminated=False,
                                        truncated=False, done=False, info={"name": "bad \ud800"},
                                        failure=FailureClass.ok, trainable=True, retryable=False, step=1,
                                        protocol="envhub/1")
    assert '"name":"bad \\\\ud800"' in answer_json(result)


def test_a_model_with_a_serializer_of_its_own_is_refused_from_the_orjson_path() -> None:
    class Renamed(BaseModel):
        value: int

        @field_serializer("value")
        def _doubled(self, value: int) -> int:
            return value * 2

    with pytest.raises(TypeError, match="plain fields"):
        _json_keys(Renamed)
    assert set(PLAIN_MODELS) == {StepResult, SessionCreated, Observation, ToolSpec, TaskRef}
    assert PLAIN_MODELS[ToolSpec] == (("name", "name"), ("description", "description"),
                                      ("input_schema", "inputSchema"))
    assert encoding._plain_fields(TaskRef(id="a", prompt="b")) == {"id": "a", "prompt": "b"}
    with pytest.raises(TypeError):
        encoding._plain_fields(decimal.Decimal(1))
    with pytest.raises(TypeError):
        encoding._plain_fields(uuid.uuid4())
