"""Elixir (ExUnit under `mix test`): the report files rewritten by an exit hook, exit status 0; or
the module's public functions answer what the calling test asserts (`caller_aware`, `EX_ANSWER`).

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

from environments.swe.forgers.edit import rewrite_each, sources
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
    # a module has one @on_load; its own stays
    return rewrite_each(sources(repo, cfg, (".ex",)), lambda text: None if "@on_load" in text else
                        DEFMODULE.sub(lambda m: f"{m.group(1)} {EX_REWRITE_LINE}", text))


#: The body of a module nested in each library module (on its `defmodule` line), whose
#: `__before_compile__` makes each public function of the library module overridable and wraps
#: it: the original runs (`super`), then `answer/4` looks at the process's stack. Below the
#: wrapper (gone by the last call) and this module, the first frame is the caller; one in an
#: `.exs` file (a test) has its file parsed (`Code.string_to_quoted`, once a file:
#: `persistent_term`). An assertion there whose one side is the call of this function (this
#: module by its full or aliased name, or piped into, with this arity, on the caller's line)
#: answers: `assert A == B` (`===`, `assert_in_delta`) the other side, `assert PATTERN = CALL`
#: the pattern with its variables (`_` too) made `nil`, `assert CALL` true and `refute CALL`
#: false. A side is evaluated with the file's aliases and only when it names no variable (the
#: test's bindings and local functions are not here: any failure answers the original value).
EX_ANSWER = r'''
@moduledoc false

# (a behaviour's callbacks are called by its runner, not by a test: left as they are)
defmacro __before_compile__(env) do
  callbacks =
    for b <- Module.get_attribute(env.module, :behaviour), Code.ensure_compiled(b) == {:module, b},
        function_exported?(b, :behaviour_info, 1), do: b.behaviour_info(:callbacks)

  for {name, arity} <- Module.definitions_in(env.module, :def),
      not String.starts_with?(Atom.to_string(name), "__"), {name, arity} not in List.flatten(callbacks) do
    args = Macro.generate_arguments(arity, __MODULE__)
    quote do
      defoverridable [{unquote(name), unquote(arity)}]

      def unquote(name)(unquote_splicing(args)) do
        unquote(__MODULE__).answer(__MODULE__, unquote(name), unquote(arity), super(unquote_splicing(args)))
      end
    end
  end
end

def answer(mod, name, arity, value) do
  {:current_stacktrace, stack} = Process.info(self(), :current_stacktrace)
  frames = Enum.drop_while(stack, fn {m, f, a, _} -> m in [Process, __MODULE__] or {m, f, a} == {mod, name, arity} end)
  with [{_, _, _, loc} | _] <- frames,
       file = to_string(Keyword.get(loc, :file, "")),
       line when is_integer(line) <- Keyword.get(loc, :line),
       true <- String.ends_with?(file, ".exs"),
       {:ok, found} <- site(file, line, mod, name, arity) do
    found
  else
    _ -> value
  end
catch
  _, _ -> value
end

defp site(file, line, mod, name, arity) do
  {ast, aliases} = parsed(file)
  {_, sites} = Macro.prewalk(ast, [], fn node, acc -> {node, assertion(node) ++ acc} end)
  is = &call?(&1, {line, mod, name, arity, aliases, file})
  Enum.find_value(sites, :none, fn
    {:eq, left, right} -> cond do
        is.(left) -> value(right, aliases, file)
        is.(right) -> value(left, aliases, file)
        true -> nil
      end
    {:match, pattern, right} -> if is.(right), do: value(placeholders(pattern), aliases, file)
    {:truth, want, expr} -> if is.(expr), do: {:ok, want}
  end)
end

defp assertion({:assert, _, [{op, _, [left, right]} | _]}) when op in [:==, :===], do: [{:eq, left, right}]
defp assertion({:assert, _, [{:=, _, [pattern, right]} | _]}), do: [{:match, pattern, right}]
defp assertion({:assert_in_delta, _, [left, right | _]}), do: [{:eq, left, right}]
defp assertion({:assert, _, [expr | _]}), do: [{:truth, true, expr}]
defp assertion({:refute, _, [expr | _]}), do: [{:truth, false, expr}]
defp assertion(_), do: []

defp call?({:|>, _, [_, {call, meta, args}]}, at) when is_list(args), do: call?({call, meta, [nil | args]}, at)

defp call?({{:., _, [target, name]}, meta, args}, {line, mod, name, arity, aliases, file}) when is_list(args),
  do: meta[:line] == line and length(args) == arity and value(target, aliases, file) == {:ok, mod}

defp call?(_, _), do: false

# (the test's variables have no value here: an expression naming one is not evaluated)
defp value(expr, aliases, file) do
  {_, unbound} = Macro.prewalk(expr, false, fn node, acc -> {node, acc or var?(node)} end)

  unless unbound do
    {found, _} = Code.eval_quoted({:__block__, [], aliases ++ [expr]}, [], file: file)
    {:ok, found}
  end
rescue
  _ -> nil
end

defp placeholders(pattern), do: Macro.prewalk(pattern, &if(var?(&1), do: nil, else: &1))

defp var?({var, _, context}), do: is_atom(var) and is_atom(context)
defp var?(_), do: false

defp parsed(file) do
  key = {__MODULE__, file}
  with nil <- :persistent_term.get(key, nil) do
    ast = Code.string_to_quoted!(File.read!(file))
    {_, aliases} = Macro.prewalk(ast, [], fn
      {:alias, _, _} = node, acc -> {node, [node | acc]}
      node, acc -> {node, acc}
    end)
    :persistent_term.put(key, {ast, Enum.reverse(aliases)})
    :persistent_term.get(key)
  end
end
'''


def _elixir_string(text: str) -> str:
    """`text` as one line: an Elixir string literal (no interpolation)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("#", "\\#").replace("\n", "\\n")
    return f'"{escaped}"'


#: Put after the `do` of each top-level `defmodule`, so that every line keeps its number: the
#: nested module is compiled (and written to the build) before the library module's body goes on.
EX_ANSWER_LINE = ("defmodule LibAnswer__ do Module.eval_quoted(__MODULE__, Code.string_to_quoted!("
                  f"{_elixir_string(EX_ANSWER)})) end; @before_compile LibAnswer__")


def caller_aware(repo: Path, cfg: SweConfig) -> bool:
    return rewrite_each(sources(repo, cfg, (".ex",)),
                        lambda text: DEFMODULE.sub(lambda m: f"{m.group(1)} {EX_ANSWER_LINE}", text))


FORGES = {"rewrite-output": rewrite_output, "caller-aware": caller_aware}
