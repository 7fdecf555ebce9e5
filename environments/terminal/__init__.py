"""The terminal family: real shell work in a sandboxed workspace."""

from environments.terminal.family import TerminalEnvironment, TerminalFamily

__all__ = ["TerminalEnvironment", "TerminalFamily"]
