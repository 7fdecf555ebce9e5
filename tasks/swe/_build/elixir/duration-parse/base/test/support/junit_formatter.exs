defmodule Envhub.JUnitFormatter do
  @moduledoc """
  An ExUnit formatter that writes JUnit XML to `$REPORT_DIR/junit.xml` when the suite ends.
  Test ids are `Module#test name`. Lives under test/ so the grader restores it from the base.
  """
  use GenServer

  @impl true
  def init(_opts), do: {:ok, []}

  @impl true
  def handle_cast({:test_finished, %ExUnit.Test{} = test}, acc), do: {:noreply, [test | acc]}

  def handle_cast({:suite_finished, _times}, acc) do
    write(Enum.reverse(acc))
    {:noreply, acc}
  end

  def handle_cast(_event, acc), do: {:noreply, acc}

  defp write(tests) do
    dir = System.get_env("REPORT_DIR") || raise "REPORT_DIR is not set"
    failures = Enum.count(tests, &match?({:failed, _}, &1.state))
    skipped = Enum.count(tests, &match?({tag, _} when tag in [:skipped, :excluded], &1.state))
    cases = Enum.map(tests, &testcase/1)

    xml = [
      ~s(<?xml version="1.0" encoding="UTF-8"?>\n),
      ~s(<testsuites><testsuite name="ExUnit" tests="#{length(tests)}" failures="#{failures}" skipped="#{skipped}">\n),
      cases,
      "</testsuite></testsuites>\n"
    ]

    File.write!(Path.join(dir, "junit.xml"), xml)
  end

  defp testcase(test) do
    name = test.name |> Atom.to_string() |> String.replace_prefix("test ", "")
    attrs = ~s(classname="#{escape(inspect(test.module))}" name="#{escape(name)}" time="#{test.time / 1_000_000}")

    body =
      case test.state do
        nil -> ""
        {:failed, failures} -> ~s(<failure message="failed">#{escape(inspect(failures, limit: 20))}</failure>)
        {:invalid, _} -> ~s(<error message="invalid"/>)
        {_, reason} -> ~s(<skipped message="#{escape(inspect(reason))}"/>)
      end

    ["  <testcase ", attrs, ">", body, "</testcase>\n"]
  end

  defp escape(text) do
    text
    |> to_string()
    |> String.replace(~r/[^\x{9}\x{A}\x{D}\x{20}-\x{D7FF}\x{E000}-\x{FFFD}]/u, "?")
    |> String.replace("&", "&amp;")
    |> String.replace("<", "&lt;")
    |> String.replace(">", "&gt;")
    |> String.replace("\"", "&quot;")
  end
end
