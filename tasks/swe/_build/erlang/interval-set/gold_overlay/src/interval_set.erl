%% @doc Sets of half-open integer intervals [From, To), kept sorted and disjoint.
%% Used for free/busy calendars and byte-range bookkeeping.
-module(interval_set).

-export([new/0, from_list/1, to_list/1, add/2, remove/2, member/2]).
-export([union/2, intersection/2, total/1, gaps/3, is_empty/1]).

-export_type([interval_set/0]).

-type interval() :: {integer(), integer()}.
-opaque interval_set() :: [interval()].

-spec new() -> interval_set().
new() -> [].

-spec is_empty(interval_set()) -> boolean().
is_empty(Set) -> Set =:= [].

-spec from_list([interval()]) -> interval_set().
from_list(Intervals) -> lists:foldl(fun add/2, new(), Intervals).

-spec to_list(interval_set()) -> [interval()].
to_list(Set) -> Set.

%% @doc Add [From, To). Overlapping and touching intervals are merged; empty ones ignored.
-spec add(interval(), interval_set()) -> interval_set().
add({From, To}, Set) when is_integer(From), is_integer(To) ->
    case From >= To of
        true -> Set;
        false -> insert(From, To, Set)
    end;
add(Bad, _Set) -> erlang:error({badarg, Bad}).

insert(F, T, []) -> [{F, T}];
insert(F, T, [{A, _} | _] = Set) when T < A -> [{F, T} | Set];
insert(F, T, [{A, B} | Rest]) when F > B -> [{A, B} | insert(F, T, Rest)];
insert(F, T, [{A, B} | Rest]) -> insert(min(F, A), max(T, B), Rest).

%% @doc Remove [From, To) from the set, splitting intervals as needed.
-spec remove(interval(), interval_set()) -> interval_set().
remove({From, To}, Set) when From >= To -> Set;
remove({From, To}, Set) ->
    lists:flatmap(fun({A, B}) when B =< From; A >= To -> [{A, B}];
                     ({A, B}) -> [{X, Y} || {X, Y} <- [{A, From}, {To, B}], X < Y]
                  end, Set).

-spec member(integer(), interval_set()) -> boolean().
member(X, Set) -> lists:any(fun({A, B}) -> A =< X andalso X < B end, Set).

-spec union(interval_set(), interval_set()) -> interval_set().
union(S1, S2) -> lists:foldl(fun add/2, S1, S2).

-spec intersection(interval_set(), interval_set()) -> interval_set().
intersection([], _) -> [];
intersection(_, []) -> [];
intersection([{A1, B1} | R1] = S1, [{A2, B2} | R2] = S2) ->
    Lo = max(A1, A2),
    Hi = min(B1, B2),
    Rest = case B1 < B2 of
               true -> intersection(R1, S2);
               false -> intersection(S1, R2)
           end,
    case Lo < Hi of
        true -> [{Lo, Hi} | Rest];
        false -> Rest
    end.

%% @doc Total length covered by the set.
-spec total(interval_set()) -> non_neg_integer().
total(Set) -> lists:sum([B - A || {A, B} <- Set]).

%% @doc The parts of [From, To) not covered by the set.
-spec gaps(integer(), integer(), interval_set()) -> [interval()].
gaps(From, To, Set) -> remove_all(Set, [{From, To} || From < To]).

remove_all([], Free) -> Free;
remove_all([I | Rest], Free) -> remove_all(Rest, remove(I, Free)).
