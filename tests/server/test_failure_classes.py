"""Failure classes over HTTP: a killed sandbox is env_error for its session only; a slow command
is agent_timeout and bad arguments agent_error, and the session lives on."""

import os
import signal
import time

from envhub.client import EnvClient

TERMINAL_TASK = "terminal/count-error-lines"


def test_sandbox_killed_mid_episode_is_env_error_and_others_keep_working(live_server):
    with EnvClient(live_server.url) as client:
        with client.session("terminal", task_id=TERMINAL_TASK) as victim, \
                client.session("terminal", task_id=TERMINAL_TASK) as bystander:
            victim.step("bash", command="echo hello")
            sandbox = live_server.hub.manager.get(victim.id).env.sandbox
            os.kill(sandbox._proc.pid, signal.SIGKILL)
            # The kill is seen when the server's loop reaps bwrap; until then (a moment, longer under
            # load) the shell, which dies with its parent asynchronously, may still answer.
            for _ in range(200):
                if sandbox._proc.returncode is not None:
                    break
                time.sleep(0.05)
            broken = victim.step("bash", command="echo again")
            assert broken.failure.value == "env_error" and broken.trainable is False and broken.retryable
            verdict = victim.verify()
            assert verdict.failure_class.value == "env_error" and not verdict.trainable
            ok = bystander.step("bash", command="echo fine")
            assert ok.failure.value == "ok" and "fine" in ok.observation.text


def test_terminal_command_timeout_and_bad_arguments(live_server):
    with EnvClient(live_server.url) as client, client.session("terminal", task_id=TERMINAL_TASK) as s:
        slow = s.step("bash", command="sleep 100", timeout_s=1)
        assert slow.failure.value == "agent_timeout" and slow.observation.data["timed_out"]
        bad = s.step("bash", cmd="ls")
        assert bad.failure.value == "agent_error" and "command" in bad.observation.text
        sneaky = s.step("bash", command="ls /verify /tasks 2>&1; find / -name 'solve.sh' 2>/dev/null | head -1")
        assert "solve.sh" not in sneaky.observation.text.replace("find / -name", "")
        alive = s.step("bash", command="echo ok")
        assert alive.failure.value == "ok"
