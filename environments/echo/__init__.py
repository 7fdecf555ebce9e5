"""A trivial environment that echoes its input: for protocol tests and benchmarks.

It has no sandbox; its one task (`tasks/echo/say-done`) passes verification when the agent has
echoed the word "done".
"""

from environments.echo.family import EchoEnvironment, EchoFamily

__all__ = ["EchoEnvironment", "EchoFamily"]
