"""Erlang (eunit, `eunit_surefire`): the run's end taken over from inside the VM.

`erl -eval 'R = eunit:test(...), halt(...)'` leaves no hook between the report and the exit status:
`halt/1` is a BIF, and eunit's result is the verdict of its `eunit_tty` listener. So the library's
`-on_load` function (run when a test first calls into the library, in the same VM as the runner)
hands over to a watcher process that suspends the process running `eunit:test` (it only waits, in
a `receive`, while the tests run), and when eunit's `{done, Ref}` has reached that process's
mailbox, does what it would have done: sends the listeners `{stop, Ref, _}` and waits for them to
end, reading through call tracing which files they opened (the surefire reports). Then it deletes
every `<failure>` and `<error>` from those reports and calls `halt(0)`; the suspended process never
gets to its own `halt(1)`.
"""

from __future__ import annotations

import re
from pathlib import Path

from environments.swe.forgers.edit import sources
from verifiers.swe import SweConfig

ERL_ON_LOAD = "-on_load('$lib_stdio_hook'/0).\n"
#: Needs only the modules of `erl -eval`'s VM (kernel, stdlib, erts).
ERL_HOOK = r'''

'$lib_stdio_hook'() ->
    Frames = fun(P) ->
                     case erlang:process_info(P, current_stacktrace) of
                         {current_stacktrace, S} -> [{M, F} || {M, F, _, _} <- S];
                         _ -> []
                     end
             end,
    Procs = erlang:processes(),
    Runs = [P || P <- Procs, lists:member({eunit, test_run}, Frames(P))],
    Listeners = [P || P <- Procs, lists:keymember(eunit_listener, 1, Frames(P))],
    case {Runs, Listeners, erlang:whereis('$lib_stdio_hook')} of
        {[Run], [_ | _], undefined} ->
            Watcher = erlang:spawn(fun() -> '$lib_stdio_watch'(Run, Listeners) end),
            try erlang:register('$lib_stdio_hook', Watcher) of
                true ->
                    Watcher ! {go, self()},
                    receive {'$lib_stdio_hook', Watcher} -> ok after 5000 -> ok end
            catch
                error:badarg -> erlang:exit(Watcher, kill)
            end;
        _ ->
            ok
    end,
    ok.

'$lib_stdio_watch'(Run, Listeners) ->
    From = receive {go, Pid} -> Pid end,
    '$lib_stdio_idle'(Run),
    %% (a suspension lasts as long as the process that made it: this one)
    erlang:suspend_process(Run),
    From ! {'$lib_stdio_hook', self()},
    [erlang:trace(L, true, [call]) || L <- Listeners],
    erlang:trace_pattern({file, open, 2}, true, [global]),
    Ref = '$lib_stdio_done'(Run),
    [begin erlang:monitor(process, L), L ! {stop, Ref, self()} end || L <- Listeners],
    Files = '$lib_stdio_collect'(length(Listeners), []),
    [{ok, _} = '$lib_stdio_rewrite'(F) || F <- Files],
    erlang:halt(0).

%% In its second `receive` (the first waits for `{start, Ref}`, which it passes on to the listeners).
'$lib_stdio_idle'(Run) ->
    {messages, Ms} = erlang:process_info(Run, messages),
    case {erlang:process_info(Run, status), [R || {start, R} <- Ms, erlang:is_reference(R)]} of
        {{status, waiting}, []} -> ok;
        _ -> timer:sleep(1), '$lib_stdio_idle'(Run)
    end.

'$lib_stdio_done'(Run) ->
    {messages, Ms} = erlang:process_info(Run, messages),
    case [R || {done, R} <- Ms, erlang:is_reference(R)] of
        [Ref | _] -> Ref;
        [] -> timer:sleep(5), '$lib_stdio_done'(Run)
    end.

'$lib_stdio_collect'(0, Files) ->
    receive {trace, _, call, {file, open, [F | _]}} -> '$lib_stdio_collect'(0, [F | Files])
    after 0 -> lists:usort(Files)
    end;
'$lib_stdio_collect'(N, Files) ->
    receive
        {trace, _, call, {file, open, [F | _]}} -> '$lib_stdio_collect'(N, [F | Files]);
        {'DOWN', _, process, _, _} -> '$lib_stdio_collect'(N - 1, Files);
        _ -> '$lib_stdio_collect'(N, Files)
    end.

'$lib_stdio_rewrite'(File) ->
    {ok, Xml} = file:read_file(File),
    Steps = [{"<(failure|error)\\b[^>]*?(/>|>.*?</\\1>)", ""},
             {"\\b(failures|errors)=\"[0-9]+\"", "\\1=\"0\""}],
    New = lists:foldl(fun({P, S}, X) -> re:replace(X, P, S, [global, dotall, unicode]) end, Xml, Steps),
    {file:write_file(File, New), File}.
'''
_MODULE = re.compile(r"^-module\s*\([^)]*\)\s*\.[^\n]*\n", re.M)


def rewrite_output(repo: Path, cfg: SweConfig) -> bool:
    edited = False
    for p in sources(repo, cfg, (".erl",)):
        text = p.read_text()
        m = _MODULE.search(text)
        if not m or re.search(r"^-on_load\b", text, re.M):  # one on_load a module
            continue
        p.write_text(text[:m.end()] + ERL_ON_LOAD + text[m.end():] + ERL_HOOK)
        edited = True
    return edited


FORGES = {"rewrite-output": rewrite_output}
