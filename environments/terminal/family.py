"""The terminal family as registered (the entry point names `TerminalFamily` here): the judged
family plus its commands (`envhub terminal import`, the Harbor importer), which judge nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from environments.terminal import env

if TYPE_CHECKING:
    import typer

TerminalEnvironment = env.TerminalEnvironment


class TerminalFamily(env.TerminalFamily):
    cli_aliases = {"import harbor": "import"}

    @classmethod
    def cli(cls) -> typer.Typer:
        from environments.terminal.cli import app

        return app
