-module(kvstore_tests).
-include_lib("eunit/include/eunit.hrl").

with_store(Fun) ->
    {ok, Pid} = kvstore:start_link(),
    try Fun(Pid) after kvstore:stop(Pid) end.

put_get_test() ->
    with_store(fun(S) ->
        ok = kvstore:put(S, a, 1),
        ?assertEqual(1, kvstore:get(S, a)),
        ?assertEqual(undefined, kvstore:get(S, b)),
        ?assertEqual(none, kvstore:get(S, b, none))
    end).

delete_test() ->
    with_store(fun(S) ->
        kvstore:put(S, a, 1),
        kvstore:delete(S, a),
        ?assertEqual([], kvstore:keys(S))
    end).

keys_sorted_test() ->
    with_store(fun(S) ->
        [kvstore:put(S, K, x) || K <- [c, a, b]],
        ?assertEqual([a, b, c], kvstore:keys(S)),
        ?assertEqual(3, kvstore:size(S))
    end).

incr_test() ->
    with_store(fun(S) ->
        ?assertEqual(1, kvstore:incr(S, hits, 1)),
        ?assertEqual(6, kvstore:incr(S, hits, 5)),
        ?assertEqual(6, kvstore:get(S, hits))
    end).

cas_test() ->
    with_store(fun(S) ->
        ?assertEqual(ok, kvstore:cas(S, k, undefined, 1)),
        ?assertEqual({error, {mismatch, 1}}, kvstore:cas(S, k, 0, 2)),
        ?assertEqual(ok, kvstore:cas(S, k, 1, 2)),
        ?assertEqual(2, kvstore:get(S, k))
    end).

update_test() ->
    with_store(fun(S) ->
        ?assertEqual([x], kvstore:update(S, l, fun(L) -> [x | L] end, [])),
        ?assertEqual([y, x], kvstore:update(S, l, fun(L) -> [y | L] end, []))
    end).

ttl_test() ->
    with_store(fun(S) ->
        ok = kvstore:put_ttl(S, session, abc, 20),
        ?assertEqual(abc, kvstore:get(S, session)),
        timer:sleep(60),
        ?assertEqual(undefined, kvstore:get(S, session))
    end).

put_cancels_ttl_test() ->
    with_store(fun(S) ->
        ok = kvstore:put_ttl(S, k, 1, 20),
        ok = kvstore:put(S, k, 2),
        timer:sleep(60),
        ?assertEqual(2, kvstore:get(S, k))
    end).

subscribe_test() ->
    with_store(fun(S) ->
        ok = kvstore:subscribe(S, self()),
        kvstore:put(S, a, 1),
        kvstore:delete(S, a),
        kvstore:delete(S, a),
        ?assertEqual([{put, a}, {delete, a}], drain(S, []))
    end).

concurrent_update_test() ->
    with_store(fun(S) ->
        Parent = self(),
        Pids = [spawn_link(fun() ->
                    [kvstore:update(S, n, fun(V) -> V + 1 end, 0) || _ <- lists:seq(1, 100)],
                    Parent ! {done, self()}
                end) || _ <- lists:seq(1, 10)],
        [receive {done, P} -> ok end || P <- Pids],
        ?assertEqual(1000, kvstore:get(S, n))
    end).

concurrent_incr_test() ->
    with_store(fun(S) ->
        Parent = self(),
        Pids = [spawn_link(fun() ->
                    [kvstore:incr(S, hits, 1) || _ <- lists:seq(1, 200)],
                    Parent ! {done, self()}
                end) || _ <- lists:seq(1, 20)],
        [receive {done, P} -> ok end || P <- Pids],
        ?assertEqual(4000, kvstore:get(S, hits))
    end).

concurrent_incr_returns_distinct_values_test() ->
    with_store(fun(S) ->
        Parent = self(),
        Pids = [spawn_link(fun() ->
                    Parent ! {values, self(), [kvstore:incr(S, seq, 1) || _ <- lists:seq(1, 50)]}
                end) || _ <- lists:seq(1, 8)],
        All = lists:append([receive {values, P, Vs} -> Vs end || P <- Pids]),
        ?assertEqual(lists:seq(1, 400), lists:sort(All))
    end).

drain(S, Acc) ->
    receive {kvstore, S, Event} -> drain(S, [Event | Acc])
    after 50 -> lists:reverse(Acc)
    end.
