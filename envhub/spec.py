"""Wire protocol v1: the request and response models every envhub server speaks.

These are the shapes on the wire (HTTP JSON bodies and WebSocket frames). Domain types live in
`envhub.env` and `envhub.tasks`; ORM rows live in `envhub.store`. Responses forbid extra fields
so drift between server and client is caught by tests rather than by users.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, field_validator

from envhub.errors import FailureClass

PROTOCOL_VERSION = "envhub/1"


#: A run's id (`/v1/runs`): what a reset may carry; letters, digits and `._:-`, at most 64.
RUN_ID_PATTERN = r"^[A-Za-z0-9._:-]{1,64}$"
SNAPSHOT_ID_PATTERN = r"^snap-[A-Za-z0-9_-]{22}$"


class _Response(BaseModel):
    model_config = ConfigDict(extra="forbid")
    protocol: str = Field(default=PROTOCOL_VERSION, description="Protocol version of this answer.")


class ToolSpec(BaseModel):
    """A tool in MCP's shape, so the same list can be served over MCP unchanged."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    name: str
    description: str
    input_schema: dict[str, Any] = Field(alias="inputSchema", serialization_alias="inputSchema")


class ToolCall(BaseModel):
    """An action: the same shape in every family."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "examples": [{"tool": "bash", "arguments": {"command": "ls -la"}}]})
    tool: str = Field(min_length=1, max_length=128, description="Name of a tool from the reset answer.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Arguments per the tool's inputSchema.")


def unencodable(value: Any) -> bool:
    """Whether `value` holds a string UTF-8 cannot encode (a lone surrogate), at any depth."""
    if isinstance(value, str):
        if value.isascii():
            return False
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, (dict, list, tuple)):  # a tuple: an `X | Y` union costs 5x as much per check
        try:
            orjson.dumps(value)  # one pass in C, and it refuses a lone surrogate: the common case
            return False
        except TypeError:  # a lone surrogate, or something JSON has no form for: look closer
            pass
    if isinstance(value, dict):
        return any(unencodable(k) or unencodable(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(unencodable(v) for v in value)
    return False


def escape_unencodable(value: Any) -> Any:
    """`value` with every character UTF-8 cannot encode (a lone surrogate) as its escape text (`\\ud800`)."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {escape_unencodable(k): escape_unencodable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [escape_unencodable(v) for v in value]
    return value


class Observation(BaseModel):
    """What the agent sees after a reset or a step."""

    model_config = ConfigDict(extra="forbid")
    text: str = Field(default="", description="The tool's result as text for the model.")
    data: dict[str, Any] = Field(default_factory=dict, description="Structured result for programs.")
    is_error: bool = Field(default=False, description="Whether the tool call failed.")
    timed_out: bool = Field(default=False, description="The call ran out of its time limit and was stopped "
                                                       "(the step is then graded `agent_timeout`).")

    # Field validators, not a model validator: pydantic runs a model's "after" validator again each
    # time the observation is placed in an answer (`StepResult`, `SessionCreated`), a field's only
    # when the field is given.
    @field_validator("text")
    @classmethod
    def _valid_unicode_text(cls, text: str) -> str:
        """A tool may hand back a string UTF-8 cannot encode (a file name, a stored value, an echoed
        argument): keep it as escape text, so the answer, the step log and the store all encode it."""
        return escape_unencodable(text) if unencodable(text) else text

    @field_validator("data")
    @classmethod
    def _valid_unicode_data(cls, data: dict[str, Any]) -> dict[str, Any]:
        return escape_unencodable(data) if data and unencodable(data) else data


class TaskRef(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    prompt: str


class ResetRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "examples": [{"env": "terminal", "task_id": "terminal/count-error-lines"}]})
    env: str = Field(max_length=64, description="Environment family, e.g. `terminal`.")
    task_id: str | None = Field(default=None, max_length=256,
                                description="Task to load; a random task of `env` if omitted.")
    seed: int | None = Field(default=None, ge=0, description="Seed for task sampling and the environment.")
    harness: str | None = Field(default=None, max_length=64, description=(
        "Tool-schema skin (`plain` by default): `mcp`, `openhands`, `claude-code`, `codex`, `swe-agent`; "
        "/v1/envs says which can present each environment."))
    lease_s: float | None = Field(default=None, gt=0, le=86_400, description="Idle lease; renewed by each call.")
    policy_version: str | None = Field(default=None, max_length=128, description="Recorded with the episode.")
    run_id: str | None = Field(default=None, pattern=RUN_ID_PATTERN, description=(
        "The training run this episode belongs to (`/v1/runs`), recorded with the episode; the run's "
        "figures count the episodes of its owner that carry its id."))
    from_snapshot: str | None = Field(default=None, pattern=SNAPSHOT_ID_PATTERN, description=(
        "Start from a snapshot of yours (`POST /v1/sessions/{id}/snapshot`) instead of the task's start: "
        "its task, state and step log (`env` must be its family; `task_id`, if given, its task)."))


class SessionCreated(_Response):
    session_id: str
    env: str
    observation: Observation
    tools: list[ToolSpec]
    task: TaskRef
    lease_expires_at: datetime
    client_token: str | None = Field(default=None, description=(
        "Without API keys: the token this session belongs to. Send it as `Authorization: Bearer <token>` "
        "on the session's calls (and on later resets, to own those too); other callers get 404."))


#: The most sessions one fork makes.
MAX_FORKS = 64


class ForkRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"n": 8}]})
    n: int = Field(default=1, ge=1, le=MAX_FORKS, description=(
        "How many sessions to make, each with its own id and a copy of the source's state at its current step."))


class SnapshotInfo(_Response):
    """A kept copy of a live episode, which `POST /v1/sessions {"from_snapshot": id}` starts from."""

    snapshot_id: str
    session_id: str = Field(description="The session it was taken from.")
    env: str
    task_id: str
    step: int = Field(description="The session's step count when it was taken.")
    created_at: datetime
    expires_at: datetime


class SnapshotList(_Response):
    snapshots: list[SnapshotInfo]


class Forked(_Response):
    """The sessions a fork made, each answered as a reset is: its observation says what the copy did
    not carry, and `data.forked_from` / `data.at_step` where it branched."""

    sessions: list[SessionCreated]


class StepRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "examples": [{"action": {"tool": "bash", "arguments": {"command": "wc -l log.txt"}}}]})
    action: ToolCall
    idempotency_key: str | None = Field(default=None, max_length=128,
                                        description="A repeated key returns the first answer instead of acting twice.")


class StepResult(_Response):
    observation: Observation
    reward: float | None = Field(description="Step reward; envhub families reward at verify, so usually null.")
    terminated: bool = Field(description=(
        "The episode reached a terminal state of its task (Gymnasium's `terminated`): it was verified, or its "
        "family ended it. Nothing follows it: a trainer does not bootstrap past it."))
    truncated: bool = Field(description=(
        "A budget (the task's step or episode-time limit) cut the episode off before a terminal state "
        "(Gymnasium's `truncated`): stop stepping, call verify; the state is not terminal, so a trainer "
        "that bootstraps does so here."))
    done: bool = Field(description=(
        "The episode is over: `terminated or truncated` (OpenEnv's `done`, Gymnasium's old single flag)."))
    info: dict[str, Any] = Field(default_factory=dict)
    failure: FailureClass = FailureClass.ok
    trainable: bool = True
    retryable: bool = False
    step: int = Field(description="1-based index of this step in the episode.")


#: What a verifier check counts for (the one list; `verifiers.check` runs apart from envhub and
#: repeats it, a test keeps the two equal).
CheckKind = Literal["hard", "collateral", "anti_hack", "soft", "quality"]
#: The gate: every check of these kinds must pass for any reward.
GATE_KINDS: tuple[CheckKind, ...] = ("hard", "collateral", "anti_hack")


class CheckResult(BaseModel):
    """One requirement of a verifier: one pytest test."""

    model_config = ConfigDict(extra="forbid")
    id: str
    kind: CheckKind = "hard"
    weight: float = 1.0
    passed: bool
    score: float = Field(ge=0, le=1)
    message: str = ""


class VerifierRef(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    sha256: str


class VerifyResult(_Response):
    reward: float = Field(description="gate × weighted checks; meaningful only when `trainable`.")
    passed: bool
    checks: list[CheckResult] = Field(default_factory=list)
    failure_class: FailureClass
    trainable: bool
    retryable: bool
    detail: str = ""
    verifier: VerifierRef
    timings: dict[str, float] = Field(default_factory=dict)

    def for_agent(self) -> AgentVerdict:
        """This verdict as the agent may see it: every surface an agent reaches (MCP's `verify`
        tool, OpenEnv's submit) hands it this, never the whole result, whose check messages and
        detail quote the hidden expected value (`assert '1' == '270'`), diffs and test output."""
        return AgentVerdict(reward=self.reward, passed=self.passed, failure_class=self.failure_class,
                            checks=[CheckOutcome(id=c.id, kind=c.kind, passed=c.passed) for c in self.checks])


class VerdictOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reward: float
    passed: bool
    failure_class: FailureClass

    @classmethod
    def of(cls, result: VerifyResult) -> VerdictOutcome:
        return cls(reward=result.reward, passed=result.passed, failure_class=result.failure_class)


class Reverified(_Response):
    """A second judging of a verified episode's final state (`POST /v1/sessions/{id}/reverify`): the
    verifier run again on the state exported at verify, beside the verdict the episode keeps."""

    first: VerdictOutcome = Field(description="The episode's verdict (what verify answered).")
    second: VerdictOutcome = Field(description="The verifier's verdict on the same final state, judged again now.")
    flipped: bool = Field(description="Whether the reward or the pass differ between the two.")


class CheckOutcome(BaseModel):
    """One check as an agent sees it: which requirement, of what kind, and whether it held."""

    model_config = ConfigDict(extra="forbid")
    id: str
    kind: CheckKind
    passed: bool


class AgentVerdict(BaseModel):
    """A verdict as an agent sees it (`VerifyResult.for_agent`): the reward and which checks held.
    The trainer's verify answer (REST, WebSocket, the clients) keeps every message."""

    model_config = ConfigDict(extra="forbid")
    reward: float
    passed: bool
    failure_class: FailureClass
    checks: list[CheckOutcome] = Field(default_factory=list)

    def text(self) -> str:
        """The line a model reads: `reward 0 (failed; ok); failed: count-correct (hard); passed: ...`."""
        line = f"reward {self.reward:g} ({'passed' if self.passed else 'failed'}; {self.failure_class.value})"
        for label, held in (("failed", False), ("passed", True)):
            ids = [f"{c.id} ({c.kind})" for c in self.checks if c.passed is held]
            if ids:
                line += f"; {label}: {', '.join(ids)}"
        return line


class SessionState(_Response):
    session_id: str
    env: str
    task_id: str
    step_count: int
    terminated: bool = Field(description="The episode reached a terminal state (it was verified, or its family "
                                         "ended it).")
    truncated: bool = Field(description="A budget (steps, episode time) cut the episode off.")
    done: bool = Field(description="The episode is over: `terminated or truncated`.")
    created_at: datetime
    lease_expires_at: datetime
    verified: bool


class Capacity(_Response):
    max_sessions: int
    active_sessions: int
    free: int


class ValidationSummary(BaseModel):
    model_config = ConfigDict(extra="allow")
    status: Literal["validated", "rejected", "stale", "unvalidated"]
    validated_at: datetime | None = None


class HarnessStats(BaseModel):
    model_config = ConfigDict(extra="forbid")
    episodes: int
    failure_classes: dict[str, int]
    mean_reward: float | None = Field(description="Over judged, trainable episodes; null when there are none.")
class MissingRequirement(BaseModel):
    """Why a family or task cannot run on this machine, and the command that fixes it."""

    reason: str
    fix: str


class Calibration(BaseModel):
    """A task's measured difficulty: pass@k of one policy, from the newest calibration run
    (`envhub calibrate`) that played the task. Kept in the episode store, never in the task's files."""

    model_config = ConfigDict(extra="forbid")
    run_id: str = Field(description="The calibration run (`/v1/runs/{id}`) whose episodes these are.")
    policy: str = Field(description="The policy the run sampled from, as `envhub calibrate --policy` named it.")
    k: int = Field(ge=1, description="Samples per task the run asked for.")
    n: int = Field(ge=0, description="Judged episodes (trainable); masked infra faults are left out.")
    passed: int = Field(ge=0, description="Of the n judged episodes, those that passed.")
    masked: int = Field(ge=0, description="Episodes ended by a fault no policy causes (not judged).")
    pass_at_1: float | None = Field(description="passed / n; null when n = 0.")
    pass_at_k: float | None = Field(description="The unbiased estimate 1 - C(n-c, k) / C(n, k) (Chen et al. "
                                                "2021); null when fewer than k episodes were judged.")
    mean_reward: float | None = Field(description="Over the judged episodes; null when n = 0.")
    calibrated_at: datetime


class TaskInfo(_Response):
    """Public facts about a task; never the hidden tests, solution or expected state."""

    id: str
    env: str
    title: str
    prompt: str
    difficulty: str
    tags: list[str]
    metadata: dict[str, Any]
    validation: ValidationSummary
    by_harness: dict[str, HarnessStats] = Field(default_factory=dict, description=(
        "Recorded episodes per harness skin (on a single task's answer): where the rewards differ, a model "
        "depends on a tool schema."))
    #: Set when this machine lacks what the task needs (a reset answers 503 with it).
    unavailable: MissingRequirement | None = None
    calibration: Calibration | None = Field(default=None, description=(
        "pass@k of the newest calibration run that played this task (`envhub calibrate`); null when uncalibrated."))


class TaskList(_Response):
    tasks: list[TaskInfo]
    total: int


class EnvInfo(_Response):
    name: str
    description: str
    task_count: int
    validated: int
    rejected: int
    tools: list[ToolSpec]
    harnesses: dict[str, str | None] = Field(default_factory=dict, description=(
        "Each harness skin a reset may ask for: null when it can present this environment, else why not."))
    #: "available", "partial" (some tasks cannot run here) or "unavailable" (none can).
    availability: Literal["available", "partial", "unavailable"] = "available"
    #: What the family lacks on this machine and the command that fixes it.
    unavailable: MissingRequirement | None = None
    unavailable_tasks: int = 0


class EnvList(_Response):
    envs: list[EnvInfo]


class Problem(BaseModel):
    """RFC 9457 problem details, the one error body for HTTP and WebSocket."""

    model_config = ConfigDict(extra="allow")
    type: str = "about:blank"
    title: str
    status: int
    detail: str
    code: str
    failure_class: FailureClass | None = None
    retryable: bool = False


# --- WebSocket frames (/v1/sessions/ws) -------------------------------------------------------

class WsReset(BaseModel):
    op: Literal["reset"]
    id: str | int | None = None
    data: ResetRequest
    replace: bool = Field(default=False, description="Close this connection's previous session first "
                                                      "(one round trip per episode for a rollout worker).")


class WsStep(BaseModel):
    op: Literal["step"]
    id: str | int | None = None
    session_id: str | None = None
    data: StepRequest


class WsVerify(BaseModel):
    op: Literal["verify"]
    id: str | int | None = None
    session_id: str | None = None


class WsState(BaseModel):
    op: Literal["state"]
    id: str | int | None = None
    session_id: str | None = None


class WsClose(BaseModel):
    op: Literal["close"]
    id: str | int | None = None
    session_id: str | None = None


class WsSnapshot(BaseModel):
    op: Literal["snapshot"]
    id: str | int | None = None
    session_id: str | None = None


class WsFork(BaseModel):
    op: Literal["fork"]
    id: str | int | None = None
    session_id: str | None = None
    data: ForkRequest = Field(default_factory=ForkRequest)


WsFrame = Annotated[WsReset | WsStep | WsVerify | WsState | WsClose | WsFork | WsSnapshot, Field(discriminator="op")]


# --- The episode store (/v1/episodes) ---------------------------------------------------------

@dataclass(frozen=True)
class Stored:
    """How many characters of a text field the store keeps (its column's `VARCHAR(chars)`): a note
    for the store's columns, which validation ignores (no answer is refused for it)."""

    chars: int


class EpisodeHeader(BaseModel):
    """Who ran what: the episode header, declared here once. The session's header
    (`Session.header_fields`, carried by every store event), the store's row (`EpisodeRow`'s
    header columns), the writer's insert and the views (`EpisodeInfo`, the store's
    `EpisodeSummary`) all take their fields from this model (`tests/store/test_header.py`)."""

    model_config = ConfigDict(extra="forbid")
    id: Annotated[str, Stored(64)] = Field(description="The session id the episode ran under.")
    env: Annotated[str, Stored(64)]
    task_id: Annotated[str, Stored(300)]
    harness: Annotated[str, Stored(64)] = Field(description="The tool-schema skin the agent saw.")
    policy_version: Annotated[str | None, Stored(128)] = Field(
        description="What the trainer passed at reset, to compare checkpoints.")
    run_id: Annotated[str | None, Stored(64)] = Field(
        default=None, description="The run the trainer named at reset (`/v1/runs`).")
    created_at: datetime
    parent_id: Annotated[str | None, Stored(64)] = Field(default=None, description=(
        "The session this episode was forked from (`POST /v1/sessions/{id}/fork`); its first "
        "`forked_at_step` steps are the parent's."))
    forked_at_step: int | None = Field(default=None, description="The parent's step count when it was forked.")


#: The header's fields, in their declared order.
HEADER_FIELDS: tuple[str, ...] = tuple(EpisodeHeader.model_fields)


class EpisodeInfo(EpisodeHeader, _Response):
    """One recorded episode: who ran what, and the verdict (null fields: not verified yet)."""

    ended_at: datetime | None
    step_count: int
    reward: float | None
    passed: bool | None
    failure_class: FailureClass | None
    trainable: bool | None
    reset_s: float | None
    verify_s: float | None


class EpisodeList(_Response):
    episodes: list[EpisodeInfo] = Field(description="Newest first.")
    total: int = Field(description="How many episodes match the filters.")


class EpisodeCheck(BaseModel):
    """A recorded check (kinds as stored: an older record may hold one no longer in `CheckKind`)."""

    model_config = ConfigDict(extra="forbid")
    id: str
    kind: str
    weight: float
    passed: bool
    score: float
    message: str


class EpisodeStep(BaseModel):
    """One step of the trajectory as the store keeps it (long arguments and observations are cut);
    made from the session's step entry by `envhub.episode.StepEntry.stored`."""

    model_config = ConfigDict(extra="forbid")
    step: int
    tool: str
    arguments: Any
    arguments_cut: bool
    observation: str
    observation_cut: bool
    is_error: bool
    failure: str
    elapsed_s: float | None


class EpisodeDetail(EpisodeInfo):
    """An episode with its verdict's checks and timings, and its trajectory."""

    verified_at: datetime | None
    detail: str
    verifier_sha256: str | None
    timings: dict[str, Any]
    checks: list[EpisodeCheck]
    steps: list[EpisodeStep] = Field(description="The trajectory, from `step_offset`, at most `step_limit` steps.")
    steps_total: int = Field(description="How many steps were recorded.")


# --- Training runs (/v1/runs) ------------------------------------------------------------------

#: The integers a run's JSON may hold: the answers' encoder (orjson) writes 64-bit ones only.
_INT64 = 2**63 - 1


def _finite(value: Any) -> Any:
    """`value` with NaN and infinities as null: JSON has no such numbers (PostgreSQL refuses them),
    and a trainer's loss may well be one; null says the figure had no finite value. An integer past
    64 bits is refused (no answer could carry it back)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, int) and not isinstance(value, bool) and not -_INT64 - 1 <= value <= _INT64:
        raise ValueError("integers must fit in 64 bits")
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


class RunCreate(BaseModel):
    """`POST /v1/runs`: a run begins. With an `id` of the caller's choosing (the one its resets carry),
    creating it again is a no-op, so a retried create never makes two runs."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "examples": [{"id": "grpo-smollm2-0001", "config": {"lr": 3e-5, "group_size": 8, "eta": 2}}]})
    id: str | None = Field(default=None, pattern=RUN_ID_PATTERN, description="The run's id; a random one if omitted.")
    config: dict[str, Any] = Field(default_factory=dict, description="The trainer's configuration, as JSON.")

    @field_validator("config")
    @classmethod
    def _finite_config(cls, config: dict[str, Any]) -> dict[str, Any]:
        return _finite(config)


class RunStepReport(BaseModel):
    """`POST /v1/runs/{id}/steps`: one trainer step's figures. Reporting a step again replaces it."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "examples": [{"step": 1, "policy_version": "1", "figures": {"loss": 0.12, "valid": 16, "gpu_s": 3.5}}]})
    step: int = Field(ge=0, le=2**31 - 1, description="The trainer's step index.")
    policy_version: str | None = Field(default=None, max_length=128, description="The policy after this step.")
    figures: dict[str, float | dict[str, float | None] | None] = Field(
        default_factory=dict, max_length=64,
        description="Numbers by name (loss, kl, valid, discarded, duplicated, trainer_wait_s, cpu_s, gpu_s...); "
                    "a histogram is a map of numbers (staleness: {\"0\": 12, \"1\": 4}). NaN and infinities "
                    "are kept as null.")

    @field_validator("figures")
    @classmethod
    def _finite_figures(cls, figures: dict[str, Any]) -> dict[str, Any]:
        return _finite(figures)


class RunStep(_Response):
    step: int
    policy_version: str | None
    reported_at: datetime
    figures: dict[str, Any]


class RunInfo(_Response):
    id: str
    created_at: datetime
    config: dict[str, Any]
    steps: int = Field(description="How many steps the trainer reported.")


class RunList(_Response):
    runs: list[RunInfo] = Field(description="Newest first.")
    total: int


class RewardByPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid")
    policy_version: str | None
    n: int = Field(description="Judged trainable episodes (masked infra faults left out).")
    mean: float | None
    ci95: tuple[float, float] | None = Field(description="95 % confidence interval of the mean, within [0, 1]: "
                                                         "Wilson's score interval when every reward is 0 or 1, else "
                                                         "Student's t clipped; null below two episodes.")


class LengthBucket(BaseModel):
    model_config = ConfigDict(extra="forbid")
    steps: str = Field(description="Episode length in steps: `0`, `1`, `2-3`, `4-7`, ...")
    n: int
    solved: int
    rate: float | None


class VerifierDisagreement(BaseModel):
    model_config = ConfigDict(extra="forbid")
    sampled: int = Field(description="The run's episodes whose final state was judged a second time.")
    flipped: int = Field(description="Of those, the ones whose reward or pass changed.")
    rate: float = Field(description="flipped / sampled.")


class RunFigures(BaseModel):
    """What the hub computes for a run from its episodes and the trainer's step reports (the README
    says what each figure means)."""

    model_config = ConfigDict(extra="forbid")
    episodes: int
    reward_by_policy: list[RewardByPolicy]
    failure_classes: dict[str, int]
    trainable_share: float | None = Field(description="Of the verified episodes, those a trainer may learn from.")
    anti_hack_rate: float | None = Field(description="Of the episodes with checks, those whose anti_hack check failed.")
    trajectories_per_s: float | None = Field(description="Ended episodes over the run's span (first reset, last end).")
    episode_s_p50: float | None
    episode_s_p99: float | None
    success_by_length: list[LengthBucket]
    trainer: dict[str, Any] = Field(description="The step reports' counters summed (discarded, duplicated, retried, "
                                                "repaired, dropped, cpu_s, gpu_s, trainer_wait_s), staleness merged.")
    cpu_s_per_success: float | None
    gpu_s_per_success: float | None
    verifier_disagreement: VerifierDisagreement | None = Field(
        default=None, description="Re-verified final states (a day-seeded sample) and the verdicts that flipped.")
    unknown: dict[str, str] = Field(description="Why a figure is null, by figure.")


class RunDetail(RunInfo):
    step_reports: list[RunStep]
    figures: RunFigures
