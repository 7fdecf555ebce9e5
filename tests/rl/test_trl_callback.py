"""A TRL (transformers) training reports its steps to its envhub run: `EnvhubRunCallback.on_log`,
called as transformers' own `CallbackHandler` calls it, with its real `TrainerState`, against a real
db server. No model and no GPU: the logs are what `GRPOTrainer.log` hands its callbacks."""

from __future__ import annotations

import uuid

import pytest

from envhub.client import EnvClient

transformers = pytest.importorskip("transformers", reason="the rl extra (./scripts/install-rl.sh)")
from transformers import TrainerControl, TrainerState  # noqa: E402
from transformers.trainer_callback import CallbackHandler  # noqa: E402

from envhub.rl.trl import EnvhubRunCallback, step_figures_of  # noqa: E402

TOKEN = "rl-trl-callback-client-token-0000001"

#: What TRL 1.16's GRPOTrainer logs at a logging step (names from `GRPOTrainer._metrics` and
#: `Trainer._maybe_log_save_evaluate`).
STEP_1 = {"loss": 0.0213, "grad_norm": 1.75, "learning_rate": 5e-06, "num_tokens": 2048.0,
          "completions/mean_length": 31.5, "rewards/envhub_reward/mean": 0.25, "reward": 0.25,
          "reward_std": 0.4330, "frac_reward_zero_std": 0.5, "kl": 0.0, "entropy": 1.92, "epoch": 0.5}
STEP_2 = {**STEP_1, "loss": 0.0107, "reward": 0.75, "learning_rate": 2.5e-06, "kl": float("nan"), "epoch": 1.0}
SUMMARY = {"train_runtime": 12.5, "train_samples_per_second": 1.28, "train_loss": 0.016, "epoch": 1.0}


def test_trl_logs_become_the_runs_step_figures(db_server) -> None:
    run_id = f"trl-{uuid.uuid4().hex[:8]}"
    with EnvClient(db_server.url, api_key=TOKEN, retries=0) as client:
        client.create_run(run_id, {"trainer": "trl.GRPOTrainer"})
        callback = EnvhubRunCallback(db_server.url, run_id, api_key=TOKEN)
        assert isinstance(callback, transformers.TrainerCallback)
        handler = CallbackHandler([callback], model=None, processing_class=None, optimizer=None, lr_scheduler=None)
        state, control = TrainerState(max_steps=2, logging_steps=1), TrainerControl()
        for step, logs in ((1, STEP_1), (2, STEP_2), (2, SUMMARY)):  # the closing summary comes at the last step
            state.global_step = step
            handler.on_log(None, state, control, dict(logs))
        state.is_world_process_zero = False  # another rank: reports nothing
        state.global_step = 3
        handler.on_log(None, state, control, dict(STEP_1))
        run = client.get_run(run_id)

    reports = {s["step"]: s for s in run["step_reports"]}
    assert sorted(reports) == [1, 2] and [reports[k]["policy_version"] for k in (1, 2)] == ["1", "2"]
    one, two = reports[1]["figures"], reports[2]["figures"]
    assert (one["loss"], one["learning_rate"], one["mean_reward"], one["kl"]) == (0.0213, 5e-06, 0.25, 0.0)
    assert one["grad_norm"] == 1.75 and one["completions/mean_length"] == 31.5 and one["cpu_s"] >= 0
    assert "reward" not in one and "gpu_s" not in one  # renamed as envhub's trainer names it; no model on a GPU
    assert (two["loss"], two["mean_reward"], "kl" in two) == (0.0107, 0.75, False)  # NaN left out
    assert two["train_runtime"] == 12.5 and two["train_loss"] == 0.016  # the summary merged, the step's kept
    assert run["figures"]["trainer"]["cpu_s"] == pytest.approx(one["cpu_s"] + two["cpu_s"], abs=1e-5)


def test_a_refused_report_never_stops_the_training(db_server, caplog: pytest.LogCaptureFixture) -> None:
    callback = EnvhubRunCallback(EnvClient(db_server.url, api_key=TOKEN, retries=0), f"no-such-{uuid.uuid4().hex}")
    state = TrainerState(global_step=1)
    callback.on_log(None, state, TrainerControl(), logs=dict(STEP_1))  # the hub answers 404: logged
    assert "not reported" in caplog.text


def test_figures_keep_numbers_only_and_leave_eval_logs_out() -> None:
    assert step_figures_of({"loss": 1, "eval_loss": 0.5, "flag": True, "name": "x", "inf": float("inf"),
                            "reward": 0.5}) == {"loss": 1.0, "mean_reward": 0.5}
