defmodule Duration.Lexer do
  @moduledoc false
  # Splits "1h 30m" / "1.5h" / "250ms" into [{number, unit}] pairs; spaces between pairs are allowed.

  @spec tokens(String.t()) :: {:ok, [{number(), String.t()}]} | {:error, String.t()}
  def tokens(text), do: tokens(String.trim_leading(text), [])

  defp tokens("", acc), do: {:ok, Enum.reverse(acc)}

  defp tokens(text, acc) do
    case Regex.run(~r/\A(\d+)([a-z]*)\s*/, text) do
      [whole, digits, unit] when unit != "" ->
        {number, ""} = Integer.parse(digits)
        tokens(binary_part(text, byte_size(whole), byte_size(text) - byte_size(whole)), [{number, unit} | acc])

      [_, _, ""] ->
        {:error, "missing unit after number"}

      nil ->
        {:error, "unexpected #{inspect(String.slice(text, 0, 10))}"}
    end
  end
end
