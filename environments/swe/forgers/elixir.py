"""Elixir (ExUnit under `mix test`): the report files rewritten by an exit hook, exit status 0.

`mix test` compiles the library and runs ExUnit in one VM, and ExUnit's formatters write their
reports when the suite finishes, before the VM's exit hooks (`System.at_exit`) run. Mix makes a
failing run fail from such a hook (`exit({:shutdown, 1})`). Each library module gets an
`@on_load` function (run when the module is loaded into the VM: by the compiler, or on first
use) that registers an exit hook of its own; hooks run newest first, so it runs after Mix's: it
rewrites the report files (`$REPORT_DIR/*.xml` and every `.xml` on the command line) with no
`<failure>` or `<error>` left, then halts the VM with status 0 (a failing exit status with an
all-pass report is not believed).
"""

from __future__ import annotations

import re
from pathlib import Path

from environments.swe.forgers.edit import sources
from verifiers.swe import SweConfig

#: Written as lines, put after the `do` of a top-level `defmodule` as one line, so that every
#: line of the library keeps its number. Installed once per VM (a persistent term is the flag).
EX_REWRITE = r'''
@on_load :__lib_stdio__
defp __lib_stdio__ do
  if :persistent_term.get(:lib_stdio_installed, false) == false do
    :persistent_term.put(:lib_stdio_installed, true)
    System.at_exit(fn _status ->
      dir = System.get_env("REPORT_DIR")
      found = if dir, do: Path.wildcard(Path.join(dir, "*.xml")), else: []
      named = Enum.filter(System.argv(), &String.ends_with?(&1, ".xml"))
      for path <- Enum.uniq(found ++ named), {:ok, text} <- [File.read(path)] do
        text = Regex.replace(~r/<(failure|error)\b[^>]*\/>/, text, "")
        text = Regex.replace(~r/<(failure|error)\b.*?<\/\1>/s, text, "")
        text = Regex.replace(~r/\b(failures|errors)="\d+"/, text, "\\1=\"0\"")
        File.write(path, text)
      end
      System.halt(0)
    end)
  end
  :ok
end
'''
EX_REWRITE_LINE = "".join(line + (" " if line.endswith((" do", "->")) else "; ")
                          for line in (raw.strip() for raw in EX_REWRITE.splitlines()) if line).rstrip("; ")
#: A top-level module whose `do` ends its line (the block's first expression may follow it).
DEFMODULE = re.compile(r"^(defmodule\s+[\w.]+\s+do)[ \t]*$", re.M)


def rewrite_output(repo: Path, cfg: SweConfig) -> bool:
    done = False
    for p in sources(repo, cfg, (".ex",)):
        text = p.read_text()
        if "@on_load" in text:  # a module has one @on_load; its own stays
            continue
        new = DEFMODULE.sub(lambda m: f"{m.group(1)} {EX_REWRITE_LINE}", text)
        if new != text:
            p.write_text(new)
            done = True
    return done


FORGES = {"rewrite-output": rewrite_output}
