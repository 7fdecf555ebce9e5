"""Train SmolLM2-135M on envhub db tasks with envhub.rl: SFT warm-up, then GRPO; held-out reward
before and after, the same GRPO with injected env faults, and async (η=2) vs synchronous (η=0).

    python benchmarks/train_grpo.py                       # the CPU profile (≤ 20 min on 2 cores)
    python benchmarks/train_grpo.py --profile smoke       # one GRPO step (CI)
    python benchmarks/train_grpo.py --profile cuda --device cuda --model DIR   # a GPU

Tasks: look-up questions from three db domains (find the record, copy one value out of it). GRPO
trains on `db/bank/ask-balance-002` and `db/hr/ask-salary-002` and is evaluated on the held-out
`db/bank/ask-balance-003`, `db/hr/ask-salary-003` and `db/retail/ask-refundable-002`, which ask about
other records. The SFT warm-up uses oracle episodes of *other* tasks (a balance, a salary, a
refundable amount, a shipment status, a buyer's email), run against the real server and rendered
through the codec, so the warm-up data are token-exact trajectories too. The split was chosen by
probing: after the warm-up, the held-out and training tasks are solved part of the time, so GRPO's
groups carry signal (an all-0 or all-1 group teaches nothing). The harness renders only the tools
the tasks' oracles use (plus submit_answer), to keep prompts short for a 135M model.
`--train`, `--held-out` and `--sft-tasks` take other splits.

Evidence, not anecdotes:
- Held-out evaluation is paired: episode i of a task samples with the same seed at every evaluation
  point (per-request generators in `HFPolicy`), so "before" and "after" differ only by the weights.
  Each comparison reports the mean paired difference with a 95 % bootstrap CI (episodes resampled
  within each task, fixed bootstrap seed).
- The fault run is the clean run again: same SFT weights, same run seed (so the same task order
  and the same sampling seed for every rollout slot), against a server that fails 10 % of resets,
  steps and verifies. A failed episode is re-run with its seed (`--retries`, 5 in the cpu profile)
  before the buffer repairs or drops what still failed, so both runs train on the same
  trajectories, up to the rare episode that fails every time and the float rounding of different
  batch compositions. (An episode makes about four server calls, so about 31 % fail at least once;
  with 3 retries a slot still fails with probability 0.31^4 ≈ 0.9 %, about even odds of one
  repaired group in the run's 64 slots, after which the runs' weights part; with 5, 0.09 %.)
- Both GRPO runs use η = 0 in the cpu profile (`--eta`): with η ≥ 1 the actor samples a group's
  turns while the learner's steps land, so which weights sampled which turn, and hence the
  trajectories, depend on timing (and faults shift it). Synchronous rounds make a rollout a
  function of the weights and its seed only. On two cores overlap buys little anyway: the actor
  and the learner share them. The async-vs-sync comparison below still measures η = 2.

Writes under --out: metrics.json, reward_curve.png, trajectories.jsonl.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from envhub.client import AsyncEnvClient
from envhub.rl.buffer import BufferConfig
from envhub.rl.codec import ChatCodec, format_call
from envhub.rl.policy import Generation, HFPolicy
from envhub.rl.rollout import RolloutConfig, derive_seed, rollout_group, run_episode
from envhub.rl.trainer import GRPOLearner, StepReport, sft_step, train_grpo
from envhub.rl.trajectory import Trajectory, write_jsonl

REPO = Path(__file__).resolve().parents[1]
# Look-up questions: find the record, copy one value from it. The held-out tasks ask other records
# than any SFT or GRPO task (db/retail/ask-refundable-003 asks the same order as -001: left out).
TRAIN = ["db/bank/ask-balance-002", "db/hr/ask-salary-002"]
HELD_OUT = ["db/bank/ask-balance-003", "db/hr/ask-salary-003", "db/retail/ask-refundable-002"]
COMPARE = ["db/logistics/ask-status-001", "db/logistics/ask-status-002"]  # LongTailPolicy answers a status
SFT = ["db/bank/ask-balance-001", "db/hr/ask-salary-001", "db/retail/ask-refundable-001",
       "db/logistics/ask-status-001", "db/retail/ask-buyer-email-001"]
SYSTEM = "Answer with the exact value from the tool result."

PROFILES: dict[str, dict[str, Any]] = {
    # one GRPO step, nothing else: CI's smoke
    # dapo=False on CPU: an all-equal group then costs a step with zero advantages instead of an
    # unbounded number of re-rolls (a weak model produces many of them)
    "smoke": dict(sft_steps=1, steps=1, G=2, B=1, eval_samples=0, fault_rate=0.0, compare=False, per_turn=48,
                  dapo=False, sft_batch=2, lr=2e-5, eta=1, retries=3),
    # sized for two cores (about 18 min idle): the held-out "before" is the SFT model (the base model
    # does not know the tool-call format; --eval-base adds it); 12 paired episodes per held-out task
    "cpu": dict(sft_steps=8, steps=4, G=8, B=2, eval_samples=12, fault_rate=0.1, compare=True, per_turn=48,
                dapo=False, sft_batch=2, lr=3e-5, eta=0, retries=5),
    # only the async-vs-sync comparison (no model weights: the policy and learner costs are simulated)
    "compare": dict(sft_steps=0, steps=0, G=4, B=2, eval_samples=0, fault_rate=0.0, compare=True, per_turn=48,
                    dapo=False, sft_batch=2, lr=2e-5, only_compare=True, eta=0, retries=3),
    "cuda": dict(sft_steps=60, steps=40, G=8, B=4, eval_samples=16, fault_rate=0.1, compare=True, per_turn=96,
                 dapo=True, sft_batch=8, lr=2e-5, eta=1, retries=3),
}

console = Console()


def oracle_actions(task_id: str) -> list[dict[str, Any]]:
    return json.loads((REPO / "tasks" / task_id / "solution" / "actions.json").read_text())


def rollout_cfg(task_ids: str | list[str], per_turn: int) -> RolloutConfig:
    """Render only the tools the tasks' oracles use, plus submit_answer (the union over a task set)."""
    ids = [task_ids] if isinstance(task_ids, str) else task_ids
    tools = {a["tool"] for t in ids for a in oracle_actions(t)} | {"submit_answer"}
    return RolloutConfig(tools=sorted(tools), max_turns=3, per_turn_tokens=per_turn, token_budget=1536,
                         system=SYSTEM)


class OraclePolicy:
    """Emits a task's oracle calls as canonical tokens (logprob 0): SFT data through the real codec."""

    engine = "oracle"
    version = -1

    def __init__(self, tok: Any, actions: list[dict[str, Any]]) -> None:
        self.turns = [tok.encode(format_call(a["tool"], a["arguments"]), add_special_tokens=False)
                      + [tok.eos_token_id] for a in actions]

    async def generate(self, prompt_ids: list[int], max_tokens: int, seed: int | None = None) -> Generation:
        ids = self.turns.pop(0)
        return Generation(ids, [0.0] * len(ids), 0, "stop")


class Server:
    """`envhub serve --env db` in its own process (torch keeps this one's cores busy)."""

    def __init__(self, port: int, fault_rate: float = 0.0) -> None:
        env = {**os.environ, "ENVHUB_FAULT_RATE": str(fault_rate), "ENVHUB_FAULT_SEED": "13"}
        self.url = f"http://127.0.0.1:{port}"
        self.proc = subprocess.Popen([sys.executable, "-m", "envhub.cli", "serve", "--env", "db", "--port", str(port),
                                      "--log-level", "warning"], env=env)

    async def wait(self) -> None:
        async with AsyncEnvClient(self.url, retries=0, timeout=5) as c:
            for _ in range(600):
                try:
                    await c.health()
                    return
                except Exception:  # noqa: BLE001 - not up yet
                    if self.proc.poll() is not None:
                        raise RuntimeError("envhub serve exited") from None
                    await asyncio.sleep(0.2)
        raise RuntimeError("envhub serve did not start")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def eval_seeds(task: str, k: int, seed: int) -> list[int]:
    """Episode i of a task samples with the same seed at every evaluation point: paired figures."""
    return [derive_seed("eval", seed, task, i) for i in range(k)]


async def evaluate(url: str, policy: HFPolicy, codec: ChatCodec, tasks: list[str], k: int, per_turn: int,
                   seed: int = 0) -> dict[str, Any]:
    if k <= 0:
        return {"mean_reward": None, "n": 0}
    t0 = time.monotonic()
    async with AsyncEnvClient(url) as env:
        groups = await asyncio.gather(*(rollout_group(env, policy, codec, t, k, cfg=rollout_cfg(t, per_turn),
                                                      sampling_seeds=eval_seeds(t, k, seed)) for t in tasks))
    by_task = dict(zip(tasks, groups, strict=True))
    trajs = [t for g in groups for t in g]
    rewards = [t.reward for t in trajs if t.trainable]
    per_task = {task: [t.reward for t in g if t.trainable] for task, g in by_task.items()}
    return {"mean_reward": statistics.fmean(rewards) if rewards else None, "n": len(rewards),
            "masked": len(trajs) - len(rewards), "wall_s": round(time.monotonic() - t0, 1),
            "per_task": {task: statistics.fmean(r) if r else None for task, r in per_task.items()},
            # episode i of each task, in seed order (None: masked): what the paired comparisons read
            "rewards": {task: [t.reward if t.trainable else None for t in g] for task, g in by_task.items()},
            "sampled_turns": {task: [sampled_text(codec, t) for t in g[:3]] for task, g in by_task.items()}}


def paired(before: dict[str, Any], after: dict[str, Any], resamples: int = 10_000, seed: int = 13) -> dict[str, Any]:
    """after − before over the episodes judged in both (same task, same sampling seed): the mean
    difference and its 95 % bootstrap CI, resampling episodes within each task (each task's count is
    fixed by the design, so the CI is over sampling, for these tasks)."""
    diffs = {task: [b - a for a, b in zip(before["rewards"][task], after["rewards"][task], strict=True)
                    if a is not None and b is not None] for task in before["rewards"]}
    diffs = {task: d for task, d in diffs.items() if d}
    flat = [x for d in diffs.values() for x in d]
    if not flat:
        return {"n": 0, "mean_diff": None, "ci95": None}
    rng = random.Random(seed)
    means = sorted(sum(sum(rng.choices(d, k=len(d))) for d in diffs.values()) / len(flat) for _ in range(resamples))
    return {"n": len(flat), "mean_diff": statistics.fmean(flat),
            "ci95": [means[int(0.025 * resamples)], means[int(0.975 * resamples) - 1]],
            "changed": sum(x != 0 for x in flat), "up": sum(x > 0 for x in flat), "down": sum(x < 0 for x in flat)}


def brief(ev: dict[str, Any]) -> str:
    """An evaluation in one line: the mean, then each task's (metrics.json keeps the turns too)."""
    if ev["mean_reward"] is None:
        return "none judged"
    tasks = ", ".join(f"{t.rsplit('/', 1)[-1]} {r:.2f}" for t, r in ev["per_task"].items() if r is not None)
    return f"{ev['mean_reward']:.3f} over {ev['n']} episodes ({ev['masked']} masked, {ev['wall_s']:.0f} s): {tasks}"


def brief_diff(c: dict[str, Any]) -> str:
    if c["mean_diff"] is None:
        return "no paired episodes"
    lo, hi = c["ci95"]
    return (f"Δ {c['mean_diff']:+.3f} [95% CI {lo:+.3f}, {hi:+.3f}] over {c['n']} paired episodes "
            f"({c['changed']} changed)")


def sampled_text(codec: ChatCodec, t: Trajectory) -> str:
    """The episode's sampled turns, each cut short: what the policy did (for reading the metrics)."""
    return " | ".join(codec.decode(t.token_ids[turn.start:turn.end]).replace("\n", " ")[:100]
                      for turn in t.turns if turn.role == "assistant")


async def sft_data(url: str, tok: Any, codec: ChatCodec, tasks: list[str], per_turn: int) -> list[Trajectory]:
    async with AsyncEnvClient(url) as env:
        out = await asyncio.gather(*(run_episode(env, OraclePolicy(tok, oracle_actions(task)), codec, task,
                                                 cfg=rollout_cfg(task, per_turn)) for task in tasks))
    for task, t in zip(tasks, out, strict=True):
        if t.reward != 1.0:
            raise RuntimeError(f"oracle episode of {task} scored {t.reward} ({t.failure_class}: {t.failure_detail})")
    return list(out)


@dataclass
class PhaseResult:
    reports: list[StepReport]
    faults_seen: dict[str, int]  # every failed attempt by class (retried or not), each masked
    retried: int
    recovered: int
    stats: dict[str, int]
    wall_s: float
    rollouts: int
    untrainable_with_reward: int
    per_step: list[dict[str, Any]]  # faults and retries of each step's groups (η = 0: rolled out for that step)
    sampled: dict[int, tuple[int, ...]]  # sampling seed → the judged episode's tokens (slots that trained)


def step_table(rep: StepReport, faults: Counter[str], retried: int) -> Table:
    m = rep.metrics
    t = Table(box=None, show_header=rep.step == 1)
    for col in ("step", "reward", "valid", "retried", "repaired", "dropped", "dapo", "masked faults", "stale drops",
                "tok/s", "loss", "s"):
        t.add_column(col, justify="right")
    masked = sum(v for k, v in m.items() if k.startswith("masked_"))
    stale = sum(v for k, v in m.items() if k.startswith("dropped_"))
    valid = rep.trajectories / max(1.0, rep.trajectories + masked)
    t.add_row(str(rep.step), f"{m.get('mean_reward', 0):.3f}", f"{valid:.2f}", str(retried),
              f"{m.get('groups_repaired', 0):.0f}", f"{m.get('groups_dropped', 0):.0f}",
              f"{m.get('groups_dapo_filtered', 0):.0f}", ",".join(f"{k}:{v}" for k, v in faults.items()) or "0",
              f"{stale:.0f}", f"{rep.tokens_per_s:.1f}", f"{m.get('loss', 0):+.4f}", f"{rep.wall_s:.1f}")
    return t


async def grpo_phase(url: str, policy: HFPolicy, learner: GRPOLearner, codec: ChatCodec, p: dict[str, Any],
                     tasks: list[str], jsonl: Path | None, label: str, seed: int) -> PhaseResult:
    eta = p["eta"]
    console.rule(f"GRPO {label}: {p['steps']} steps, G={p['G']}, B={p['B']}, η={eta}, retries={p['retries']}")
    faults: Counter[str] = Counter()  # every failed attempt (cumulative, for the progress table)
    counts: Counter[str] = Counter()  # since the last step
    per_step: list[dict[str, Any]] = []
    sampled: dict[int, tuple[int, ...]] = {}
    new_seeds: list[int] = []
    bad = [0]
    cfg = rollout_cfg(tasks, p["per_turn"])

    def on_group(group: list[Trajectory]) -> None:
        for t in group:
            faults.update(t.retried_failures)
            counts["failed_attempts"] += len(t.retried_failures) + (not t.trainable)
            counts["retried"] += len(t.retried_failures)
            counts["recovered"] += bool(t.retried_failures) and t.trainable
            counts["still_failed"] += not t.trainable
            if not t.trainable:
                faults[t.failure_class] += 1
                bad[0] += t.reward is not None  # must stay 0: a fault is never a reward
            else:
                sampled[t.sampling["seed"]] = tuple(t.token_ids)
                new_seeds.append(t.sampling["seed"])
        if jsonl is not None:
            write_jsonl(group, jsonl)
        console.print(f"  group {group[0].task_id}: rewards {[t.reward for t in group]}, "
                      f"turns {[t.num_turns for t in group]}, tool errors {sum(t.num_tool_errors for t in group)}, "
                      f"retried {sum(len(t.retried_failures) for t in group)}, "
                      f"gen {max(t.gen_s for t in group):.0f}s env {max(t.env_s for t in group):.0f}s", style="dim")

    def on_step(rep: StepReport) -> None:
        m = rep.metrics
        per_step.append({"step": rep.step, "mean_reward": round(m.get("mean_reward", 0.0), 4),
                         "failed_attempts": counts["failed_attempts"], "retried": counts["retried"],
                         "recovered": counts["recovered"], "still_failed": counts["still_failed"],
                         "groups_repaired": int(m.get("groups_repaired", 0)),
                         "groups_dropped": int(m.get("groups_dropped", 0)), "seeds": list(new_seeds)})
        counts.clear()
        new_seeds.clear()
        console.print(step_table(rep, faults, sum(d["retried"] for d in per_step)))

    t0 = time.monotonic()
    async with AsyncEnvClient(url) as env:
        run = await train_grpo(env, policy, learner, codec, tasks, steps=p["steps"],
                               buffer_cfg=BufferConfig(batch_groups=p["B"], group_size=p["G"], eta=eta,
                                                       max_concurrent=max(2, p["B"] * (eta + 1)), dapo=p["dapo"]),
                               rollout_cfg=cfg, seed=seed, retries=p["retries"], on_step=on_step, on_group=on_group)
    return PhaseResult(run.reports, dict(run.faults_seen), run.retried, run.recovered, dict(run.stats),
                       time.monotonic() - t0, run.rollouts, bad[0], per_step, sampled)


def fault_comparison(clean: PhaseResult, faulty: PhaseResult) -> dict[str, Any]:
    """The two GRPO runs side by side, step by step: rewards, the faults of the fault run and how
    many rollout slots sampled exactly the clean run's tokens (the same seed in both)."""
    rows = []
    for c, f in zip(clean.per_step, faulty.per_step, strict=False):
        both = [s for s in f["seeds"] if s in clean.sampled]
        rows.append({"step": c["step"], "reward_clean": c["mean_reward"], "reward_faults": f["mean_reward"],
                     "same_tokens": sum(clean.sampled[s] == faulty.sampled[s] for s in both),
                     "slots_compared": len(both),
                     **{k: f[k] for k in ("failed_attempts", "retried", "recovered", "still_failed", "groups_repaired",
                                          "groups_dropped")}})
    total = {k: sum(r[k] for r in rows) for k in ("same_tokens", "slots_compared", "failed_attempts", "retried",
                                                   "recovered", "still_failed", "groups_repaired", "groups_dropped")}
    return {"per_step": rows, "total": total, "faults_by_class": faulty.faults_seen,
            "faults_with_a_reward": faulty.untrainable_with_reward}


def print_fault_comparison(fc: dict[str, Any]) -> None:
    t = Table("step", "reward clean", "reward faults", "same tokens", "failed attempts", "retried", "recovered",
              "still failed", "groups repaired", "groups dropped", title="clean vs injected faults, same seeds")
    for r in fc["per_step"] + [{"step": "all", "reward_clean": None, "reward_faults": None, **fc["total"]}]:
        t.add_row(str(r["step"]), "" if r["reward_clean"] is None else f"{r['reward_clean']:.3f}",
                  "" if r["reward_faults"] is None else f"{r['reward_faults']:.3f}",
                  f"{r['same_tokens']}/{r['slots_compared']}", str(r["failed_attempts"]), str(r["retried"]),
                  str(r["recovered"]), str(r["still_failed"]), str(r["groups_repaired"]), str(r["groups_dropped"]))
    console.print(t)


# -- async vs sync -----------------------------------------------------------------------------------------
class LongTailPolicy:
    """Answers from the oracle (right half the time) after a Pareto-distributed decode time: the
    long-tailed episode lengths of agentic RL, without spending the CPU on decoding."""

    engine = "longtail"

    def __init__(self, tok: Any, seed: int, scale_s: float) -> None:
        self.tok, self.rng, self.scale = tok, random.Random(seed), scale_s
        self.version = 0
        self.temperature = 1.0
        self.generated_tokens = 0

    def push(self, _weights: Any, version: int) -> None:
        self.version = version

    async def generate(self, prompt_ids: list[int], max_tokens: int, seed: int | None = None) -> Generation:
        version = self.version
        await asyncio.sleep(min(20.0, self.scale * self.rng.paretovariate(1.3)))
        answer = "in_transit" if self.rng.random() < 0.5 else "delivered"
        ids = self.tok.encode(format_call("submit_answer", {"answer": answer}), add_special_tokens=False)
        ids.append(self.tok.eos_token_id)
        self.generated_tokens += len(ids)
        return Generation(ids, [-0.7] * len(ids), version, "stop")


class SleepLearner:
    """A learner step of fixed cost (what a GPU step costs relative to decoding)."""

    def __init__(self, step_s: float) -> None:
        self.step_s, self.version = step_s, 0

    def step(self, trajectories: list[Trajectory]) -> dict[str, float]:
        time.sleep(self.step_s)
        self.version += 1
        return {"loss": 0.0, "tokens": float(sum(sum(t.loss_mask) for t in trajectories))}

    def weights(self) -> dict[str, Any]:
        return {}


async def async_vs_sync(url: str, tok: Any, codec: ChatCodec, steps: int = 5) -> dict[str, Any]:
    console.rule("async (η=2) vs synchronous (η=0): trajectories trained per minute, long-tailed episodes")
    out = {}
    for eta in (0, 2):
        policy = LongTailPolicy(tok, seed=5, scale_s=0.5)
        learner = SleepLearner(step_s=1.5)
        t0 = time.monotonic()
        async with AsyncEnvClient(url) as env:
            run = await train_grpo(env, policy, learner, codec, COMPARE, steps=steps,  # type: ignore[arg-type]
                                   buffer_cfg=BufferConfig(batch_groups=2, group_size=4, eta=eta, max_concurrent=8),
                                   rollout_cfg=rollout_cfg(COMPARE, 64))
        wall = time.monotonic() - t0
        trained = sum(r.trajectories for r in run.reports)
        out[f"eta{eta}"] = {"steps": steps, "trajectories_trained": trained, "wall_s": round(wall, 2),
                            "trajectories_per_min": round(60 * trained / wall, 1),
                            "dropped_stale": run.stats.get("dropped_stale", 0)}
    t = Table("η", "trajectories trained", "wall s", "per minute", "stale drops")
    for k, v in out.items():
        t.add_row(k[3:], str(v["trajectories_trained"]), f"{v['wall_s']:.1f}", f"{v['trajectories_per_min']:.1f}",
                  str(v["dropped_stale"]))
    console.print(t)
    return out


def plot(curves: dict[str, list[float]], evals: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    for label, ys in curves.items():
        ax.plot(range(1, len(ys) + 1), ys, marker="o", label=f"train reward ({label})")
    for label, v in evals.items():
        if v.get("mean_reward") is not None:
            ax.axhline(v["mean_reward"], linestyle="--", linewidth=1, label=f"held-out {label}",
                       color={"base": "grey", "after_sft": "tab:orange", "after_grpo": "tab:green",
                              "after_grpo_faults": "tab:red"}.get(label))
    ax.set_xlabel("GRPO step")
    ax.set_ylabel("mean reward")
    ax.set_ylim(-0.05, 1.05)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(profile: str = typer.Option("cpu", help="smoke | cpu | cuda"),
         device: str = typer.Option("cpu"), model: Path = typer.Option(None, help="An HF model folder "
                                                                               "(default: SmolLM2 from the wheel)"),
         out: Path = typer.Option(None, help="Default: benchmarks/out/train_grpo_<profile>."),
         steps: int = typer.Option(None), sft_steps: int = typer.Option(None),
         lr: float = typer.Option(None, help="GRPO's learning rate (the profile's by default)."),
         seed: int = typer.Option(0), threads: int = typer.Option(2),
         eval_base: bool = typer.Option(False, help="Also evaluate the base model before SFT."),
         train: str = typer.Option(",".join(TRAIN), help="GRPO's tasks, comma-separated."),
         held_out: str = typer.Option(",".join(HELD_OUT), help="The held-out tasks, comma-separated."),
         sft_tasks: str = typer.Option(",".join(SFT), help="The SFT warm-up's oracle tasks, comma-separated."),
         eval_samples: int = typer.Option(None, help="Episodes per held-out task and evaluation."),
         group_size: int = typer.Option(None, help="G: rollouts per group."),
         batch_groups: int = typer.Option(None, help="B: groups per optimiser step."),
         fault_rate: float = typer.Option(None, help="Injected env faults in the second GRPO run (0: none)."),
         eta: int = typer.Option(None, help="η of both GRPO runs (0: synchronous; the profile's by default)."),
         retries: int = typer.Option(None, help="Re-runs of an episode whose env or verifier failed."),
         compare: bool = typer.Option(None, help="Run the async-vs-sync comparison.")) -> None:
    import torch

    from envhub.rl.models import load_smollm2

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally blocks: stop the servers
    p = dict(PROFILES[profile])
    for key, value in (("steps", steps), ("sft_steps", sft_steps), ("lr", lr), ("eval_samples", eval_samples),
                       ("G", group_size), ("B", batch_groups), ("fault_rate", fault_rate), ("eta", eta),
                       ("retries", retries), ("compare", compare)):
        if value is not None:
            p[key] = value
    train_tasks, held, sft_set = (v.split(",") for v in (train, held_out, sft_tasks))
    torch.manual_seed(seed)
    random.seed(seed)
    if device == "cpu":
        torch.set_num_threads(threads)
    out = out or REPO / "benchmarks" / "out" / f"train_grpo_{profile}"
    out.mkdir(parents=True, exist_ok=True)
    jsonl = out / "trajectories.jsonl"
    jsonl.unlink(missing_ok=True)
    t_all = time.monotonic()
    if p.get("only_compare"):
        from transformers import AutoTokenizer

        from envhub.rl.models import default_cache

        if not (default_cache() / "tokenizer.json").exists():
            load_smollm2()
        tok = AutoTokenizer.from_pretrained(default_cache())
        actor = learner_model = None
    elif model is None:
        actor, tok = load_smollm2(device=device)
        learner_model, _ = load_smollm2(device=device)
    else:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tok = AutoTokenizer.from_pretrained(model)
        actor = AutoModelForCausalLM.from_pretrained(model).to(device)
        learner_model = AutoModelForCausalLM.from_pretrained(model).to(device)
    codec = ChatCodec(tok)
    result: dict[str, Any] = {"profile": profile, "device": device, "params": p, "train_tasks": train_tasks,
                              "held_out": held, "sft_tasks": sft_set}

    async def run() -> None:
        clean = Server(free_port())
        faulty = Server(free_port(), p["fault_rate"]) if p["fault_rate"] > 0 else None
        try:
            await clean.wait()
            if faulty:
                await faulty.wait()
            if p.get("only_compare"):
                result["async_vs_sync"] = await async_vs_sync(clean.url, tok, codec)
                return
            policy = HFPolicy(actor, tok, temperature=1.0)
            evals: dict[str, Any] = {}
            t0 = time.monotonic()
            k = p["eval_samples"]
            if eval_base:
                evals["base"] = await evaluate(clean.url, policy, codec, held, k, p["per_turn"], seed)
                console.print(f"held-out reward, base model: {brief(evals['base'])}")
            # -- SFT warm-up on oracle episodes of other tasks --------------------------------------
            data = await sft_data(clean.url, tok, codec, sft_set, p["per_turn"])
            opt = torch.optim.AdamW(learner_model.parameters(), lr=1e-4)
            learner_model.train()
            losses = []
            for i in range(p["sft_steps"]):
                batch = random.sample(data, min(p["sft_batch"], len(data)))
                losses.append(await asyncio.to_thread(sft_step, learner_model, opt, batch))
                if (i + 1) % 4 == 0 or i == 0:
                    console.print(f"SFT step {i + 1}/{p['sft_steps']}: loss {losses[-1]:.4f} "
                                  f"({time.monotonic() - t0:.0f}s)")
            sft_weights = {k: v.detach().clone() for k, v in learner_model.state_dict().items()}
            policy.push(sft_weights, 0)
            result["sft"] = {"steps": p["sft_steps"], "episodes": len(data), "loss_first": losses[0],
                             "loss_last": losses[-1], "wall_s": round(time.monotonic() - t0, 1)}
            evals["after_sft"] = await evaluate(clean.url, policy, codec, held, k, p["per_turn"], seed)
            console.print(f"held-out reward after SFT: {brief(evals['after_sft'])}")
            # -- GRPO --------------------------------------------------------------------------------
            # a micro-batch per group: its members share their prompt, which the learner forwards once
            learner = GRPOLearner(learner_model, lr=p["lr"], micro_batch=p["G"])
            phase = await grpo_phase(clean.url, policy, learner, codec, p, train_tasks, jsonl, "clean", seed)
            evals["after_grpo"] = await evaluate(clean.url, policy, codec, held, k, p["per_turn"], seed)
            console.print(f"held-out reward after GRPO: {brief(evals['after_grpo'])}")
            curves = {"clean": [r.metrics.get("mean_reward", 0.0) for r in phase.reports]}
            result["grpo"] = _phase_json(phase)
            # -- the same GRPO (SFT weights, seeds, task order) with injected env faults ----------------
            if faulty:
                learner_model.load_state_dict(sft_weights)
                policy.push(sft_weights, 0)
                learner = GRPOLearner(learner_model, lr=p["lr"], micro_batch=p["G"])
                fphase = await grpo_phase(faulty.url, policy, learner, codec, p, train_tasks, None,
                                          f"{p['fault_rate']:.0%} injected env faults", seed)
                evals["after_grpo_faults"] = await evaluate(clean.url, policy, codec, held, k, p["per_turn"], seed)
                console.print(f"held-out reward after GRPO with faults: {brief(evals['after_grpo_faults'])}")
                curves["faults"] = [r.metrics.get("mean_reward", 0.0) for r in fphase.reports]
                result["grpo_faults"] = _phase_json(fphase)
                result["fault_comparison"] = fault_comparison(phase, fphase)
                print_fault_comparison(result["fault_comparison"])
            result["eval"] = evals
            result["comparisons"] = comparisons(evals)
            if p["compare"]:
                result["async_vs_sync"] = await async_vs_sync(clean.url, tok, codec)
            plot(curves, evals, out / "reward_curve.png")
        finally:
            clean.stop()
            if faulty:
                faulty.stop()

    asyncio.run(run())
    result["wall_s"] = round(time.monotonic() - t_all, 1)
    (out / "metrics.json").write_text(json.dumps(result, indent=2))
    summary = Table("what", "value")
    for k, v in result.get("eval", {}).items():
        summary.add_row(f"held-out reward {k}", f"{v['mean_reward']}" if v["mean_reward"] is None
                        else f"{v['mean_reward']:.3f} (n={v['n']})")
    for k, c in result.get("comparisons", {}).items():
        summary.add_row(k, brief_diff(c))
    if "fault_comparison" in result:
        tot = result["fault_comparison"]["total"]
        summary.add_row("fault run", f"{tot['failed_attempts']} faults, all masked "
                        f"({result['fault_comparison']['faults_with_a_reward']} with a reward); {tot['retried']} "
                        f"retried, {tot['still_failed']} still failed → {tot['groups_repaired']} groups repaired, "
                        f"{tot['groups_dropped']} dropped; {tot['same_tokens']}/{tot['slots_compared']} slots "
                        "sampled the clean run's tokens")
    summary.add_row("wall", f"{result['wall_s']:.0f} s")
    console.print(summary)
    if result.get("comparisons"):
        console.print(one_line(result))
    console.print(f"wrote {out / 'metrics.json'}, {out / 'reward_curve.png'}")


#: (after, before) pairs reported, when both were evaluated
COMPARISONS = (("after_sft", "base"), ("after_grpo", "after_sft"), ("after_grpo_faults", "after_grpo"),
               ("after_grpo_faults", "after_sft"))


def comparisons(evals: dict[str, Any]) -> dict[str, Any]:
    return {f"{a} - {b}": paired(evals[b], evals[a]) for a, b in COMPARISONS
            if evals.get(a, {}).get("n") and evals.get(b, {}).get("n")}


def one_line(result: dict[str, Any]) -> str:
    """The evidence in one line: each figure (mean, n) and each paired difference with its CI."""
    ev, cmp = result["eval"], result["comparisons"]
    parts = [f"{k} {v['mean_reward']:.3f} (n={v['n']})" for k, v in ev.items() if v["mean_reward"] is not None]
    for k, c in cmp.items():
        if c["mean_diff"] is not None:
            lo, hi = c["ci95"]
            parts.append(f"{k}: {c['mean_diff']:+.3f} [{lo:+.3f}, {hi:+.3f}]")
    return "held-out, paired by seed, 95% bootstrap CI: " + "; ".join(parts)


def _phase_json(ph: PhaseResult) -> dict[str, Any]:
    return {"steps": len(ph.reports), "wall_s": round(ph.wall_s, 1), "rollouts": ph.rollouts,
            "faults_masked": ph.faults_seen, "faults_with_a_reward": ph.untrainable_with_reward,
            "retried": ph.retried, "recovered": ph.recovered, "buffer": ph.stats,
            "reward_per_step": [round(r.metrics.get("mean_reward", 0.0), 4) for r in ph.reports],
            "tokens_per_s": [round(r.tokens_per_s, 1) for r in ph.reports],
            "per_step": [{k: v for k, v in d.items() if k != "seeds"} for d in ph.per_step]}


if __name__ == "__main__":
    typer.run(main)
