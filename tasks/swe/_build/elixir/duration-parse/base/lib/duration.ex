defmodule Duration do
  @moduledoc """
  Human-friendly durations: parse `"1h30m"`, `"2d 4h"`, `"90s"`, `"1.5h"` or `"-15m"` into
  milliseconds, and format milliseconds back into the same compact notation.
  """

  @units [
    {"w", 7 * 24 * 3_600_000},
    {"d", 24 * 3_600_000},
    {"h", 3_600_000},
    {"m", 60_000},
    {"s", 1_000},
    {"ms", 1}
  ]
  @unit_ms Map.new(@units)

  @type ms :: integer()

  @doc "Parse a duration; returns `{:ok, ms}` or `{:error, reason}`."
  @spec parse(String.t()) :: {:ok, ms()} | {:error, String.t()}
  def parse(text) when is_binary(text) do
    text = String.trim(text)
    {sign, body} = sign(text)

    case Duration.Lexer.tokens(body) do
      {:ok, []} -> {:error, "empty duration"}
      {:ok, tokens} -> sum(tokens, sign)
      {:error, _} = err -> err
    end
  end

  @doc "Like `parse/1` but raises `ArgumentError`."
  @spec parse!(String.t()) :: ms()
  def parse!(text) do
    case parse(text) do
      {:ok, ms} -> ms
      {:error, reason} -> raise ArgumentError, "invalid duration #{inspect(text)}: #{reason}"
    end
  end

  defp sign("-" <> rest), do: {-1, String.trim_leading(rest)}
  defp sign("+" <> rest), do: {1, String.trim_leading(rest)}
  defp sign(text), do: {1, text}

  defp sum(tokens, sign) do
    Enum.reduce_while(tokens, {:ok, 0, nil}, fn {number, unit}, {:ok, total, last} ->
      cond do
        not Map.has_key?(@unit_ms, unit) ->
          {:halt, {:error, "unknown unit #{inspect(unit)}"}}

        last != nil and rank(unit) <= rank(last) ->
          {:halt, {:error, "units must go from largest to smallest"}}

        true ->
          {:cont, {:ok, total + round(number * @unit_ms[unit]), unit}}
      end
    end)
    |> case do
      {:ok, total, _} -> {:ok, sign * total}
      err -> err
    end
  end

  defp rank(unit), do: Enum.find_index(@units, fn {u, _} -> u == unit end)

  @doc "Format milliseconds compactly, largest unit first: `5_400_000` → `\"1h30m\"`."
  @spec format(ms()) :: String.t()
  def format(0), do: "0s"
  def format(ms) when is_integer(ms) and ms < 0, do: "-" <> format(-ms)

  def format(ms) when is_integer(ms) do
    {parts, _} =
      Enum.reduce(@units, {[], ms}, fn {unit, size}, {acc, left} ->
        case div(left, size) do
          0 -> {acc, left}
          n -> {[Integer.to_string(n) <> unit | acc], rem(left, size)}
        end
      end)

    parts |> Enum.reverse() |> Enum.join()
  end

  @doc "Add a duration string to a `DateTime`."
  @spec shift(DateTime.t(), String.t()) :: DateTime.t()
  def shift(%DateTime{} = dt, text), do: DateTime.add(dt, parse!(text), :millisecond)
end
