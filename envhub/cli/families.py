"""Each family's own commands, mounted as `envhub <family> ...` (`Family.cli()`), and the old
top-level names they keep (`Family.cli_aliases`: `envhub import harbor`, `envhub synth db`,
`envhub toolchains`). The core names no family: it asks each registered one.

Families are imported only when a command the core does not have is asked for, or for the
help: importing every family costs seconds, which `envhub list` and the rest never pay.
"""

from __future__ import annotations

import copy
from typing import Any

import typer
from typer.core import TyperGroup

from envhub import families

#: Help for the top-level groups that family commands join under their old names.
GROUP_HELP = {"import": "Import tasks from other formats.",
              "synth": "Generate a family's tasks (db by execution, office from packaged data), "
                       "deterministically per seed."}


class WithFamilies(TyperGroup):
    """The root command: the core's commands, then, on first need, every family's."""

    _mounted = False

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is None and not self._mounted:
            self.mount_families()
            command = super().get_command(ctx, cmd_name)
        return command

    def list_commands(self, ctx: Any) -> list[str]:
        self.mount_families()
        return super().list_commands(ctx)

    def mount_families(self) -> None:
        """Mount every registered family's commands, then their aliases; a family whose module
        cannot be imported here adds no commands (the others still work)."""
        if self._mounted:
            return
        self._mounted = True
        mounted = []
        for name in sorted(families.available()):
            try:
                family = families.family_class(name)
            except ImportError:
                continue
            commands = family.cli()
            if commands is not None:
                group = typer.main.get_group(commands)
                group.name = name
                self.add_command(group)
                mounted.append((family, group))
        for family, group in mounted:
            for path, target in family.cli_aliases.items():
                *parents, leaf = path.split()
                parent: Any = self
                for part in parents:
                    if part not in parent.commands:
                        parent.add_command(TyperGroup(name=part, help=GROUP_HELP.get(part), no_args_is_help=True))
                    parent = parent.commands[part]
                if target not in group.commands:
                    raise ValueError(f"family {family.name!r} aliases {path!r} to {target!r}, which its cli() lacks")
                alias = copy.copy(group.commands[target])  # its own name, for help and usage lines
                alias.name = leaf
                parent.add_command(alias)
