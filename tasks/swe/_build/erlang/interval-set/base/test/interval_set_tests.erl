-module(interval_set_tests).
-include_lib("eunit/include/eunit.hrl").

-define(S(L), interval_set:from_list(L)).

empty_test() ->
    ?assert(interval_set:is_empty(interval_set:new())),
    ?assertEqual([], interval_set:to_list(?S([{5, 5}, {7, 3}]))).

disjoint_stay_sorted_test() ->
    ?assertEqual([{1, 2}, {5, 8}, {10, 12}], interval_set:to_list(?S([{10, 12}, {1, 2}, {5, 8}]))).

overlap_merges_test() ->
    ?assertEqual([{1, 6}], interval_set:to_list(?S([{1, 4}, {3, 6}]))).

touching_merges_test() ->
    ?assertEqual([{1, 6}], interval_set:to_list(?S([{1, 3}, {3, 6}]))).

contained_test() ->
    ?assertEqual([{0, 10}], interval_set:to_list(?S([{0, 10}, {2, 3}]))).

bad_interval_test() ->
    ?assertError({badarg, x}, interval_set:add(x, interval_set:new())).

remove_splits_test() ->
    ?assertEqual([{0, 3}, {5, 10}], interval_set:to_list(interval_set:remove({3, 5}, ?S([{0, 10}])))).

member_test() ->
    S = ?S([{0, 2}, {4, 6}]),
    ?assert(interval_set:member(0, S)),
    ?assertNot(interval_set:member(2, S)),
    ?assert(interval_set:member(5, S)).

intersection_test() ->
    ?assertEqual([{2, 3}, {5, 6}],
                 interval_set:to_list(interval_set:intersection(?S([{0, 3}, {5, 9}]), ?S([{2, 6}])))).

total_test() ->
    ?assertEqual(7, interval_set:total(?S([{0, 3}, {10, 14}]))).

gaps_test() ->
    ?assertEqual([{0, 2}, {4, 5}], interval_set:gaps(0, 5, ?S([{2, 4}, {5, 9}]))).
