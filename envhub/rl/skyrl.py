"""SkyRL-Gym adapter: an envhub task as a `skyrl_gym` `BaseTextEnv` (text in, messages out).

    import skyrl_gym
    from envhub.rl.skyrl import register
    register()  # id "envhub"
    env = skyrl_gym.make("envhub", env_config={"base_url": URL}, extras={"task_id": "db/bank/ask-balance-001"})
    prompt, _ = env.init([])
    out = env.step('<tool_call>{"name": "search_accounts", "arguments": {...}}</tool_call>')

SkyRL's generator owns the tokens (its TI/TO path); this env owns the session. A malformed tool
call is an error observation (the policy's); calling a final tool verifies and ends the episode
with the verifier's reward, and so does a budget (the task's steps or time, or `max_turns`)
cutting it off, whose `metadata["truncated"]` says so: not a terminal state. An infrastructure
fault raises `InfraFault`: `BaseTextEnv` has no way to say "not trainable", and a reward of 0
would teach the policy that the fault was its own doing.
"""

from __future__ import annotations

from typing import Any

from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

from envhub.client import EnvClient
from envhub.errors import AgentError, EnvhubError
from envhub.rl.codec import ChatCodec, parse_tool_call


class InfraFault(RuntimeError):
    """The episode hit a fault no policy could cause (env_error, verifier_error, ...): drop it."""

    def __init__(self, failure_class: str, detail: str) -> None:
        super().__init__(f"{failure_class}: {detail}")
        self.failure_class = failure_class


class EnvhubTextEnv(BaseTextEnv):
    def __init__(self, env_config: Any = None, extras: dict[str, Any] | None = None) -> None:
        super().__init__()
        cfg = dict(env_config or {})
        extras = extras or {}
        self.task_id: str = extras["task_id"]
        self.max_turns = int(cfg.get("max_turns", 8))
        self.final_tools = tuple(cfg.get("final_tools", ("submit_answer", "refuse")))
        self.tool_filter = cfg.get("tools")
        self.run_id: str | None = cfg.get("run_id")  # the hub's run (`/v1/runs`) the resets name
        self.client = EnvClient(cfg.get("base_url", "http://127.0.0.1:8000"))
        self.session_id: str | None = None
        self.failure_class = "ok"

    def init(self, prompt: list[dict[str, str]]) -> tuple[list[dict[str, str]], dict[str, Any]]:
        try:
            created = self.client.reset(self.task_id.split("/", 1)[0], task_id=self.task_id, run_id=self.run_id)
        except EnvhubError as e:
            raise InfraFault((e.failure_class.value if e.failure_class else "env_error"), e.detail) from e
        self.session_id = created.session_id
        tools = [t.model_dump(by_alias=True) for t in created.tools]
        if self.tool_filter is not None:
            tools = [t for t in tools if t["name"] in self.tool_filter]
        system = ChatCodec.system_message(tools)
        return [*prompt, {"role": "system", "content": system},
                {"role": "user", "content": created.observation.text}], {"task_id": self.task_id}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        self.turns += 1
        out_of_turns = self.turns >= self.max_turns
        try:
            call = parse_tool_call(action)
        except AgentError as e:
            if out_of_turns:
                return self._finish(truncated=True)
            return BaseTextEnvStepOutput(observations=[{"role": "user", "content": f"error: {e.detail}"}],
                                         reward=0.0, done=False, metadata={"failure": "agent_error"})
        assert self.session_id is not None, "init() first"
        res = self.client.step(self.session_id, call.tool, **call.arguments)
        if not res.trainable:
            raise InfraFault(res.failure.value, res.observation.text)
        if call.tool in self.final_tools or res.terminated:
            return self._finish()
        if res.truncated or out_of_turns:
            # `BaseTextEnvStepOutput` has `done` only: a budget cut (the task's, or our turns) ends the
            # episode too, and says so in the metadata: not a terminal state, for a trainer that bootstraps.
            return self._finish(truncated=True)
        return BaseTextEnvStepOutput(observations=[{"role": "user", "content": res.observation.text}],
                                     reward=0.0, done=False, metadata={"failure": res.failure.value})

    def _finish(self, truncated: bool = False) -> BaseTextEnvStepOutput:
        assert self.session_id is not None
        verdict = self.client.verify(self.session_id)
        if not verdict.trainable:
            raise InfraFault(verdict.failure_class.value, verdict.detail)
        return BaseTextEnvStepOutput(observations=[], reward=float(verdict.reward), done=True,
                                     metadata={"passed": verdict.passed, "failure": verdict.failure_class.value,
                                               "truncated": truncated})

    def close(self) -> None:
        if self.session_id is not None:
            try:
                self.client.close_session(self.session_id)
            finally:
                self.session_id = None
        self.client.close()


def register(env_id: str = "envhub") -> None:
    """Register the env with skyrl_gym (idempotent: skyrl_gym refuses a second registration)."""
    import skyrl_gym
    from skyrl_gym.envs.registration import registry

    if env_id not in registry:
        skyrl_gym.register(id=env_id, entry_point="envhub.rl.skyrl:EnvhubTextEnv")
