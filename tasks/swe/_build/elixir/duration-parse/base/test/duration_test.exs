defmodule DurationTest do
  use ExUnit.Case, async: true

  test "parses single units" do
    assert Duration.parse("90s") == {:ok, 90_000}
    assert Duration.parse("250ms") == {:ok, 250}
    assert Duration.parse("2w") == {:ok, 1_209_600_000}
  end

  test "parses combined units with and without spaces" do
    assert Duration.parse("1h30m") == {:ok, 5_400_000}
    assert Duration.parse("2d 4h") == {:ok, 187_200_000}
  end

  test "parses a sign" do
    assert Duration.parse("-15m") == {:ok, -900_000}
    assert Duration.parse("+ 1s") == {:ok, 1_000}
  end

  test "rejects unknown units" do
    assert {:error, "unknown unit \"y\""} = Duration.parse("3y")
  end

  test "rejects units out of order" do
    assert {:error, _} = Duration.parse("30m1h")
  end

  test "rejects empty and unitless input" do
    assert {:error, "empty duration"} = Duration.parse("  ")
    assert {:error, _} = Duration.parse("15")
  end

  test "parse! raises" do
    assert_raise ArgumentError, fn -> Duration.parse!("soon") end
  end

  test "formats compactly" do
    assert Duration.format(5_400_000) == "1h30m"
    assert Duration.format(0) == "0s"
    assert Duration.format(-61_000) == "-1m1s"
    assert Duration.format(1_001) == "1s1ms"
  end

  test "format and parse round trip" do
    for ms <- [1, 999, 61_000, 86_400_000 + 5, 3 * 604_800_000] do
      assert Duration.parse!(Duration.format(ms)) == ms
    end
  end

  test "shifts a datetime" do
    shifted = Duration.shift(~U[2026-01-01 00:00:00Z], "1d2h")
    assert DateTime.compare(shifted, ~U[2026-01-02 02:00:00Z]) == :eq
  end
end
