"""`envhub calibrate`: pass@k of a policy per task, recorded as a run the registry reads (#38)."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import random
import re
import secrets
from datetime import UTC, datetime
from typing import Annotated, Any

import typer

from envhub.cli._shared import (
    JsonOpt,
    app,
    check_env,
    console,
    fitted_table,
    group_label,
    local_server,
    log_line,
    print_json,
    progress_bar,
)
from envhub.config import get_settings

POLICY_FORMS = ("http(s)://HOST[:PORT] (an OpenAI-compatible /v1/completions server taking token ids, with "
                "--tokenizer)", "local:smollm2 (SmolLM2-135M on this CPU; the rl extra)",
                "MODULE:FUNCTION (returns (policy, tokenizer))")


@app.command()
def calibrate(task_ids: Annotated[list[str], typer.Argument(help="Tasks (default: --env's, or all).")] = None,  # type: ignore
              policy: str = typer.Option(..., "--policy", help="The policy: a completions server's URL, "
                                         "`local:smollm2`, or MODULE:FUNCTION returning (policy, tokenizer)."),
              k: int = typer.Option(8, "--k", min=1, max=1024, help="Episodes per task."),
              env: str = typer.Option(None, "--env", help="Only this family's tasks."),
              q: str = typer.Option(None, "--q", help="Only tasks whose id, title or prompt holds this text."),
              sample: int = typer.Option(0, "--sample", min=0, help="A seeded draw of this many of the tasks."),
              seed: int = typer.Option(0, "--seed", help="Seeds --sample and every episode's sampling."),
              tokenizer: str = typer.Option(None, "--tokenizer", help="For a URL policy: the model (name or "
                                            "folder) whose tokenizer and chat template the prompts use."),
              model: str = typer.Option(None, "--model", help="For a URL policy: the served model's name "
                                        "(default: --tokenizer)."),
              temperature: float = typer.Option(1.0, "--temperature", min=0.0),
              url: str = typer.Option(None, envvar="ENVHUB_URL",
                                      help="A running server's URL; default: start one in-process (this "
                                           "machine's store)."),
              run_id: str = typer.Option(None, "--run-id", help="The run's id (default calibrate-POLICY-TIME)."),
              max_turns: int = typer.Option(8, "--max-turns", min=1),
              max_tokens: int = typer.Option(256, "--max-tokens", min=1, help="Sampled tokens per turn at most."),
              token_budget: int = typer.Option(4096, "--token-budget", min=1, help="Tokens per episode at most."),
              tools: str = typer.Option(None, "--tools", help="Render only these tools (comma-separated)."),
              retries: int = typer.Option(2, "--retries", min=0, help="Re-runs of an episode ended by a fault "
                                          "no policy causes (masked), with the same seed."),
              concurrency: int = typer.Option(8, "--concurrency", min=1, help="Episodes at once."),
              as_json: JsonOpt = False) -> None:
    """Play each task k times with one policy and record pass@k per task, as a run.

    The run (`/v1/runs/{id}`, `envhub runs show ID`) holds the episodes; the registry shows each
    task's newest calibration (`calibration` in `/v1/tasks`, filters `calibrated`,
    `pass_at_k_min`, `pass_at_k_max`; the tasks pages). Masked episodes (faults no policy causes)
    are re-run, then counted apart. Exit 3 when a task ends with fewer than k judged episodes."""
    from envhub.client import AsyncEnvClient
    from envhub.rl.calibrate import calibrate as run_calibration
    from envhub.rl.codec import ChatCodec
    from envhub.rl.rollout import RolloutConfig
    from envhub.tasks.catalog import Catalog

    check_env(env)
    settings = get_settings()
    catalog = Catalog(settings.tasks_dir)
    tasks = [catalog.get(t) for t in task_ids] if task_ids else catalog.filter(env=env, text=q)
    if sample:
        tasks = random.Random(seed).sample(sorted(tasks, key=lambda t: t.id), min(sample, len(tasks)))
    if not tasks:
        raise typer.BadParameter("no task matches", param_hint="TASK_IDS / --env / --q")
    pol, tok, name = load_policy(policy, tokenizer=tokenizer, model=model, temperature=temperature)
    run_id = run_id or default_run_id(name)
    cfg = RolloutConfig(max_turns=max_turns, per_turn_tokens=max_tokens, token_budget=token_budget,
                        tools=[t.strip() for t in tools.split(",") if t.strip()] if tools else None)
    ids = [t.id for t in tasks]

    with contextlib.ExitStack() as stack, progress_bar(quiet=as_json) as progress:
        needed = sorted({t.family for t in tasks})
        base = url or stack.enter_context(local_server(settings.model_copy(update={"families": needed})))
        bar = progress.add_task(f"calibrating {len(ids)} tasks × {k}", total=len(ids))

        def heard(done: Any) -> None:
            progress.advance(bar)
            f = done.figures
            log_line(progress, as_json, f"{done.task_id}: {f.passed}/{f.n} passed, {f.masked} masked, "
                                        f"pass@{k} {_num(f.pass_at_k)}")

        async def go() -> list[Any]:
            async with AsyncEnvClient(base) as client:
                try:
                    return await run_calibration(client, pol, ChatCodec(tok), ids, k=k, policy_name=name,
                                                 run_id=run_id, cfg=cfg, seed=seed, retries=retries,
                                                 concurrency=concurrency, on_task=heard)
                finally:
                    if hasattr(pol, "aclose"):
                        await pol.aclose()

        results = asyncio.run(go())
    rows = [{**r.as_dict(), "group": group_label(t.family, t.config.metadata),
             "proxies": t.config.metadata.get("proxies") or {}} for t, r in zip(tasks, results, strict=True)]
    where = url or f"the in-process server's store ({settings.store_label()})"
    if as_json:
        print_json({"run_id": run_id, "policy": name, "k": k, "server": where, "tasks": rows})
    else:
        cells = [{"task": r["task_id"], "group": r["group"] or "-", "n": str(r["n"]), "passed": str(r["passed"]),
                  "masked": str(r["masked"]), "pass@1": _num(r["pass_at_1"]), f"pass@{k}": _num(r["pass_at_k"]),
                  "reward": _num(r["mean_reward"]), "proxies": _proxies(r["proxies"])} for r in rows]
        table = fitted_table(f"pass@{k} of {name}, run {run_id}", cells,
                             ["task", "group", "n", "passed", "masked", "pass@1", f"pass@{k}", "reward", "proxies"],
                             spare=["proxies", "reward", "group", "masked"], flex=["group", "proxies"],
                             right=("n", "passed", "masked", "pass@1", f"pass@{k}", "reward"))
        table.caption = f"recorded as run {run_id} in {where}"
        console.print(table)
    if any(r["pass_at_k"] is None for r in rows):
        raise typer.Exit(3)


def load_policy(spec: str, *, tokenizer: str | None = None, model: str | None = None,
                temperature: float = 1.0) -> tuple[Any, Any, str]:
    """(policy, tokenizer, name) from `--policy`: one of `POLICY_FORMS`."""
    if spec.startswith(("http://", "https://")):
        if not tokenizer:
            raise typer.BadParameter("a URL policy needs --tokenizer (the model whose chat template the prompts "
                                     "use)", param_hint="--tokenizer")
        from transformers import AutoTokenizer

        from envhub.rl.policy import OpenAICompletionsPolicy

        served = model or tokenizer
        pol = OpenAICompletionsPolicy(spec, served, temperature=temperature,
                                      api_key=os.environ.get("OPENAI_API_KEY") or None)
        return pol, AutoTokenizer.from_pretrained(tokenizer), f"{served}@{spec.rstrip('/')}"
    if spec == "local:smollm2":
        from envhub.rl.models import load_smollm2
        from envhub.rl.policy import HFPolicy

        weights, tok = load_smollm2()
        return HFPolicy(weights, tok, temperature=temperature), tok, spec
    module, sep, attr = spec.partition(":")
    if sep and module and attr and not spec.startswith("local:"):
        try:
            factory = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as e:
            raise typer.BadParameter(f"cannot load {spec!r}: {e}", param_hint="--policy") from None
        pol, tok = factory()
        return pol, tok, spec
    raise typer.BadParameter(f"unknown policy {spec!r}: one of " + "; ".join(POLICY_FORMS), param_hint="--policy")


def default_run_id(name: str) -> str:
    """`calibrate-POLICY-TIME-XXXX` (POLICY: the model's or function's own name), within a run id's
    64 characters and alphabet."""
    short = re.split(r"[:/]", name.split("@", 1)[0])[-1]
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", short).strip("-.")[:28] or "policy"
    return f"calibrate-{slug}-{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{secrets.token_hex(2)}"


def _proxies(proxies: Any) -> str:
    if not isinstance(proxies, dict) or not proxies:
        return "-"
    return ", ".join(f"{k} {v}" for k, v in sorted(proxies.items()))


def _num(value: Any) -> str:
    return "-" if value is None else f"{value:.3g}" if isinstance(value, float) else str(value)
