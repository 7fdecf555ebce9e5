defmodule Timeline do
  @moduledoc """
  Event timelines: merge event lists from several sources, drop duplicate deliveries,
  bucket events into fixed time windows and compute per-window counts.

  An event is a map with at least `:id` (any term) and `:at` (integer milliseconds).
  """

  @type event :: %{required(:id) => term(), required(:at) => integer(), optional(atom()) => term()}

  @doc "Merge lists that are each sorted by `:at` into one sorted list (stable: earlier sources first)."
  @spec merge([[event()]]) :: [event()]
  def merge(sources) when is_list(sources) do
    sources
    |> Enum.with_index()
    |> Enum.flat_map(fn {events, source} -> Enum.map(events, &{&1.at, source, &1}) end)
    |> Enum.sort_by(fn {at, source, _} -> {at, source} end)
    |> Enum.map(fn {_, _, e} -> e end)
  end

  @doc """
  Drop repeated deliveries of the same event: keep the first event of each `:id`,
  in the original order.
  """
  @spec dedup([event()]) :: [event()]
  def dedup(events) do
    Enum.reduce(events, [], fn event, kept ->
      if Enum.any?(kept, &(&1.id == event.id)), do: kept, else: kept ++ [event]
    end)
  end

  @doc "Group events into windows of `size_ms`, keyed by window start; windows in order."
  @spec buckets([event()], pos_integer()) :: [{integer(), [event()]}]
  def buckets(events, size_ms) when is_integer(size_ms) and size_ms > 0 do
    events
    |> Enum.group_by(&window_start(&1.at, size_ms))
    |> Enum.sort_by(fn {start, _} -> start end)
  end

  @doc "Count events per window, including empty windows between the first and the last."
  @spec counts([event()], pos_integer()) :: [{integer(), non_neg_integer()}]
  def counts([], _size_ms), do: []

  def counts(events, size_ms) do
    by_window = events |> buckets(size_ms) |> Map.new(fn {start, es} -> {start, length(es)} end)
    {first, last} = by_window |> Map.keys() |> Enum.min_max()
    for start <- first..last//size_ms, do: {start, Map.get(by_window, start, 0)}
  end

  @doc "Events with `from <= at < to`."
  @spec between([event()], integer(), integer()) :: [event()]
  def between(events, from, to), do: Enum.filter(events, &(&1.at >= from and &1.at < to))

  @doc "The longest quiet period between consecutive events, as `{from, to}`, or nil."
  @spec longest_gap([event()]) :: {integer(), integer()} | nil
  def longest_gap(events) do
    events
    |> Enum.map(& &1.at)
    |> Enum.sort()
    |> Enum.chunk_every(2, 1, :discard)
    |> Enum.max_by(fn [a, b] -> b - a end, fn -> nil end)
    |> case do
      nil -> nil
      [a, b] -> {a, b}
    end
  end

  defp window_start(at, size), do: Integer.floor_div(at, size) * size
end
