%% @doc An in-memory key-value store owned by one process, with counters,
%% compare-and-swap, per-key expiry and change subscriptions.
-module(kvstore).
-behaviour(gen_server).

-export([start_link/0, start_link/1, stop/1]).
-export([get/2, get/3, put/3, delete/2, keys/1, size/1]).
-export([incr/3, cas/4, update/4]).
-export([put_ttl/4, subscribe/2, unsubscribe/2]).
-export([init/1, handle_call/3, handle_cast/2, handle_info/2]).

-record(state, {data = #{} :: map(), timers = #{} :: map(), subs = [] :: [pid()], clock :: fun(() -> integer())}).

%% --- API ---------------------------------------------------------------------

start_link() -> start_link([]).

start_link(Opts) -> gen_server:start_link(?MODULE, Opts, []).

stop(Pid) -> gen_server:stop(Pid).

get(Pid, Key) -> get(Pid, Key, undefined).

get(Pid, Key, Default) ->
    case gen_server:call(Pid, {get, Key}) of
        {ok, Value} -> Value;
        error -> Default
    end.

put(Pid, Key, Value) -> gen_server:call(Pid, {put, Key, Value}).

delete(Pid, Key) -> gen_server:call(Pid, {delete, Key}).

keys(Pid) -> lists:sort(gen_server:call(Pid, keys)).

size(Pid) -> length(keys(Pid)).

%% @doc Add `By' to the integer under `Key' (missing counts as 0); returns the new value.
incr(Pid, Key, By) when is_integer(By) ->
    New = get(Pid, Key, 0) + By,
    ok = put(Pid, Key, New),
    New.

%% @doc Set `Key' to `New' only if it currently holds `Expected'.
cas(Pid, Key, Expected, New) -> gen_server:call(Pid, {cas, Key, Expected, New}).

%% @doc Apply `Fun' to the value under `Key' (or `Default'), store and return the result.
update(Pid, Key, Fun, Default) when is_function(Fun, 1) ->
    gen_server:call(Pid, {update, Key, Fun, Default}).

%% @doc Store a value that disappears after `Ms' milliseconds.
put_ttl(Pid, Key, Value, Ms) when is_integer(Ms), Ms > 0 ->
    gen_server:call(Pid, {put_ttl, Key, Value, Ms}).

%% @doc Receive `{kvstore, Pid, {put | delete, Key}}' messages for every change.
subscribe(Pid, Subscriber) -> gen_server:call(Pid, {subscribe, Subscriber}).

unsubscribe(Pid, Subscriber) -> gen_server:call(Pid, {unsubscribe, Subscriber}).

%% --- gen_server ----------------------------------------------------------------

init(_Opts) ->
    {ok, #state{clock = fun() -> erlang:monotonic_time(millisecond) end}}.

handle_call({get, Key}, _From, S) ->
    {reply, maps:find(Key, S#state.data), S};
handle_call({put, Key, Value}, _From, S) ->
    {reply, ok, store(Key, Value, S)};
handle_call({delete, Key}, _From, S) ->
    {reply, ok, remove(Key, S)};
handle_call(keys, _From, S) ->
    {reply, maps:keys(S#state.data), S};
handle_call({cas, Key, Expected, New}, _From, S) ->
    case maps:find(Key, S#state.data) of
        {ok, Expected} -> {reply, ok, store(Key, New, S)};
        {ok, Other} -> {reply, {error, {mismatch, Other}}, S};
        error when Expected =:= undefined -> {reply, ok, store(Key, New, S)};
        error -> {reply, {error, not_found}, S}
    end;
handle_call({update, Key, Fun, Default}, _From, S) ->
    New = Fun(maps:get(Key, S#state.data, Default)),
    {reply, New, store(Key, New, S)};
handle_call({put_ttl, Key, Value, Ms}, _From, S) ->
    S1 = store(Key, Value, S),
    Ref = erlang:send_after(Ms, self(), {expire, Key}),
    {reply, ok, S1#state{timers = maps:put(Key, Ref, S1#state.timers)}};
handle_call({subscribe, Pid}, _From, S) ->
    {reply, ok, S#state{subs = [Pid | lists:delete(Pid, S#state.subs)]}};
handle_call({unsubscribe, Pid}, _From, S) ->
    {reply, ok, S#state{subs = lists:delete(Pid, S#state.subs)}}.

handle_cast(_Msg, S) -> {noreply, S}.

handle_info({expire, Key}, S) ->
    {noreply, remove(Key, S)};
handle_info(_Msg, S) ->
    {noreply, S}.

%% --- internal ------------------------------------------------------------------

store(Key, Value, S) ->
    S1 = cancel_timer(Key, S),
    notify({put, Key}, S1),
    S1#state{data = maps:put(Key, Value, S1#state.data)}.

remove(Key, S) ->
    S1 = cancel_timer(Key, S),
    case maps:is_key(Key, S1#state.data) of
        true -> notify({delete, Key}, S1);
        false -> ok
    end,
    S1#state{data = maps:remove(Key, S1#state.data)}.

cancel_timer(Key, S) ->
    case maps:take(Key, S#state.timers) of
        {Ref, Timers} -> erlang:cancel_timer(Ref), S#state{timers = Timers};
        error -> S
    end.

notify(Event, S) ->
    [Pid ! {kvstore, self(), Event} || Pid <- S#state.subs],
    ok.
