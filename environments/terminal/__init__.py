"""The terminal family: real shell work in a sandboxed workspace."""

from environments.terminal.env import TerminalEnvironment, TerminalFamily

__all__ = ["TerminalEnvironment", "TerminalFamily"]
