defmodule TimelineTest do
  use ExUnit.Case, async: true

  defp ev(id, at), do: %{id: id, at: at}

  test "merges sorted sources" do
    a = [ev(:a1, 1), ev(:a2, 5)]
    b = [ev(:b1, 2), ev(:b2, 5)]
    assert Enum.map(Timeline.merge([a, b]), & &1.id) == [:a1, :b1, :a2, :b2]
  end

  test "merge of nothing" do
    assert Timeline.merge([]) == []
    assert Timeline.merge([[], []]) == []
  end

  test "dedup keeps the first delivery in order" do
    events = [ev(1, 10), ev(2, 11), ev(1, 12), ev(3, 13), ev(2, 14)]
    assert Timeline.dedup(events) == [ev(1, 10), ev(2, 11), ev(3, 13)]
  end

  test "dedup of an empty list" do
    assert Timeline.dedup([]) == []
  end

  test "buckets by window" do
    events = [ev(:a, 0), ev(:b, 999), ev(:c, 1000), ev(:d, -1)]
    assert Timeline.buckets(events, 1000) == [{-1000, [ev(:d, -1)]}, {0, [ev(:a, 0), ev(:b, 999)]}, {1000, [ev(:c, 1000)]}]
  end

  test "counts include empty windows" do
    events = [ev(:a, 0), ev(:b, 3500)]
    assert Timeline.counts(events, 1000) == [{0, 1}, {1000, 0}, {2000, 0}, {3000, 1}]
  end

  test "between is half open" do
    events = [ev(:a, 1), ev(:b, 2), ev(:c, 3)]
    assert Enum.map(Timeline.between(events, 2, 3), & &1.id) == [:b]
  end

  test "longest gap" do
    assert Timeline.longest_gap([ev(:a, 1), ev(:b, 10), ev(:c, 12)]) == {1, 10}
    assert Timeline.longest_gap([ev(:a, 1)]) == nil
  end

  test "bucket size must be positive" do
    assert_raise FunctionClauseError, fn -> Timeline.buckets([], 0) end
  end

  test "dedup of a small batch of repeated deliveries" do
    events = for i <- 1..500, do: ev(rem(i, 50), i)
    assert length(Timeline.dedup(events)) == 50
  end
end
