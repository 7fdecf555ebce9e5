"""The terminal family: real shell work in a sandboxed workspace.

The judged family (its oracle and mutators) is what judges a task, with the workspace the shell base
exports (`envhub.shell_env`); the tools the agent works with are in `tools.py`, the commands in
`family.py`'s registered family.
The oracle is `solution/solve.sh`, run as one `bash` call.
"""

from __future__ import annotations

from envhub.env import EnvContext, Family, Mutator
from envhub.errors import AgentError
from envhub.spec import ToolCall, ToolSpec
from envhub.tasks.model import Task
from environments.terminal.tools import TOOLS, TerminalEnvironment


class TerminalFamily(Family):
    name = "terminal"
    uses_workdir = False
    description = "Real shell work in a sandboxed workspace: files, text, archives, git, builds, services."
    # The oracle (here) and the mutators judge a task; the tools (tools.py) only serve the agent and
    # CI's oracle smoke over HTTP guards them; the Harbor importer (harbor.py, dockerfile.py) only
    # writes tasks, whose files are keyed themselves.
    judged_by = ("env.py", "mutators.py")

    def make(self, ctx: EnvContext) -> TerminalEnvironment:
        return TerminalEnvironment(ctx)

    def tool_specs(self) -> list[ToolSpec]:
        return [t.spec() for t in TOOLS]

    def mutators(self) -> dict[str, Mutator]:
        from environments.terminal.mutators import MUTATORS

        return dict(MUTATORS)

    def oracle_actions(self, task: Task) -> list[ToolCall]:
        script = task.solution_dir / "solve.sh"
        if not script.is_file():
            if "harbor" in task.config.metadata:  # an imported Harbor / Terminal-Bench task: its oracle is a script
                raise AgentError(f"task {task.id} has no oracle: {script} is missing")
            return super().oracle_actions(task)
        body = script.read_text()
        return [ToolCall(tool="bash", arguments={"command": f"bash <<'ENVHUB_SOLVE_EOF'\n{body}\nENVHUB_SOLVE_EOF"})]
