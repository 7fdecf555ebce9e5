"""Erlang (eunit, `eunit_surefire`): the run's end taken over from inside the VM; or the module's
exported functions answer what the calling test asserts (`caller_aware`, `ERL_ANSWER`).

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

from environments.swe.forgers.edit import rewrite_each, sources
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


def _hooked(text: str) -> str | None:
    m = _MODULE.search(text)
    if not m or re.search(r"^-on_load\b", text, re.M):  # one on_load a module
        return None
    return text[:m.end()] + ERL_ON_LOAD + text[m.end():] + ERL_HOOK


def rewrite_output(repo: Path, cfg: SweConfig) -> bool:
    return rewrite_each(sources(repo, cfg, (".erl",)), _hooked)


#: Appended to each library module, behind wrappers of its exported functions (`_answered`). The
#: wrapper asks `'$lib_answer'(Name, Arity)` first: from the process's stack, the frame below the
#: wrapper is its caller; a frame of this module means the library called itself (no answer). The
#: caller's source file is read (once a module: `persistent_term`), eunit's assertion macros
#: replaced by calls of marker atoms (`?assertEqual(E, X)`, `?_assertEqual`, with a comment too:
#: `'$lib_eq'(E, X)`; `?assertMatch(P, X)`; `?assert(X)`, `?assertNot(X)`) and preprocessed by
#: `epp` in a scratch copy (the test's own macros and includes expanded, lines kept). The marker
#: whose actual side is the call of this function (this module, name and arity, on the caller's
#: line) answers its other side, evaluated with no bindings (a literal, a call of a module: a
#: variable of the test fails, no answer); `not X` under `?assert` asks the negation; a ground
#: `?assertMatch` pattern is its own value. OTP's own modules (`gen_server` calling a callback)
#: are never read. Every call is qualified: the module may define `size/1` or `get/2`.
ERL_ANSWER = r"""

'$lib_answer'(F, A) ->
    try erlang:process_info(erlang:self(), current_stacktrace) of
        {current_stacktrace, St} ->
            Below = lists:dropwhile(fun({M, G, N, _}) -> {M, G, N} =/= {?MODULE, F, A};
                                       (_) -> true
                                    end, St),
            case Below of
                [_, {CM, _, _, Loc} | _] when CM =/= ?MODULE -> '$lib_answer_at'(CM, Loc, F, A);
                _ -> none
            end;
        _ ->
            none
    catch
        _:_ -> none
    end.

'$lib_answer_at'(CM, Loc, F, A) ->
    case {proplists:get_value(line, Loc), '$lib_answer_forms'(CM, proplists:get_value(file, Loc))} of
        {Line, {ok, Forms}} when erlang:is_integer(Line) ->
            Sites = '$lib_answer_sites'(Forms, []),
            '$lib_answer_first'(Sites, Line, F, A);
        _ ->
            none
    end.

'$lib_answer_first'([], _, _, _) -> none;
'$lib_answer_first'([S | Rest], Line, F, A) ->
    case '$lib_answer_site'(S, Line, F, A) of
        {ok, V} -> {ok, V};
        _ -> '$lib_answer_first'(Rest, Line, F, A)
    end.

'$lib_answer_forms'(CM, LocFile) ->
    Key = {'$lib_answer', CM},
    case persistent_term:get(Key, undefined) of
        undefined ->
            Forms = try '$lib_answer_read'(CM, LocFile) catch _:_ -> none end,
            persistent_term:put(Key, Forms),
            Forms;
        Forms ->
            Forms
    end.

'$lib_answer_read'(CM, LocFile) ->
    Beam = code:which(CM),
    Lib = code:lib_dir(),
    case erlang:is_list(Beam) andalso not lists:prefix(Lib, filename:absname(Beam)) of
        false ->
            none;
        true ->
            Compile = erlang:apply(CM, module_info, [compile]),
            Source = proplists:get_value(source, Compile),
            [File | _] = [P || P <- [Source, LocFile], erlang:is_list(P), filelib:is_regular(P)],
            {ok, Text} = file:read_file(File),
            Marks = [{"\\?_?assertEqual\\s*\\(", "'$lib_eq'("}, {"\\?_?assertMatch\\s*\\(", "'$lib_match'("},
                     {"\\?_?assertNot\\s*\\(", "'$lib_false'("}, {"\\?_?assert\\s*\\(", "'$lib_true'("}],
            Marked = lists:foldl(fun({P, R}, T) -> re:replace(T, P, R, [global, {return, binary}]) end,
                                 Text, Marks),
            Tmp = case os:getenv("TMPDIR") of
                      D when erlang:is_list(D), D =/= "" -> D;
                      _ -> "/tmp"
                  end,
            Copy = filename:join(Tmp, lists:flatten(io_lib:format("lib_answer_~p_~s",
                [erlang:unique_integer([positive]), filename:basename(File)]))),
            ok = file:write_file(Copy, Marked),
            Dir = filename:dirname(filename:absname(File)),
            Parsed = try epp:parse_file(Copy, [{includes, [Dir, filename:join(Dir, "../include"), "include"]}])
                     after file:delete(Copy)
                     end,
            {ok, Forms} = Parsed,
            {ok, Forms}
    end.

'$lib_answer_sites'(T, Acc) when erlang:is_tuple(T) ->
    Acc1 = case T of
               {call, _, {atom, _, K}, [_ | _] = Args}
                 when K =:= '$lib_eq'; K =:= '$lib_match'; K =:= '$lib_true'; K =:= '$lib_false' ->
                   [{K, Args} | Acc];
               _ ->
                   Acc
           end,
    '$lib_answer_sites'(erlang:tuple_to_list(T), Acc1);
'$lib_answer_sites'([H | T], Acc) -> '$lib_answer_sites'(T, '$lib_answer_sites'(H, Acc));
'$lib_answer_sites'(_, Acc) -> Acc.

'$lib_answer_site'({'$lib_eq', [E, X | _]}, Line, F, A) ->
    case {'$lib_answer_is'(X, Line, F, A), '$lib_answer_is'(E, Line, F, A)} of
        {true, _} -> '$lib_answer_value'(E);
        {_, true} -> '$lib_answer_value'(X);
        _ -> none
    end;
'$lib_answer_site'({'$lib_match', [P, X | _]}, Line, F, A) ->
    case '$lib_answer_is'(X, Line, F, A) of
        true -> '$lib_answer_value'(P);
        false -> none
    end;
'$lib_answer_site'({'$lib_true', [X | _]}, Line, F, A) -> '$lib_answer_bool'(X, true, Line, F, A);
'$lib_answer_site'({'$lib_false', [X | _]}, Line, F, A) -> '$lib_answer_bool'(X, false, Line, F, A);
'$lib_answer_site'(_, _, _, _) -> none.

'$lib_answer_bool'({op, _, 'not', X}, Want, Line, F, A) -> '$lib_answer_bool'(X, not Want, Line, F, A);
'$lib_answer_bool'(X, Want, Line, F, A) ->
    case '$lib_answer_is'(X, Line, F, A) of
        true -> {ok, Want};
        false -> none
    end.

'$lib_answer_is'({call, CA, {remote, _, {atom, _, ?MODULE}, {atom, _, F}}, Args}, Line, F, A) ->
    erlang:length(Args) =:= A andalso erl_anno:line(CA) =:= Line;
'$lib_answer_is'(_, _, _, _) ->
    false.

'$lib_answer_value'(E) ->
    try erl_eval:expr(E, erl_eval:new_bindings()) of
        {value, V, _} -> {ok, V}
    catch
        _:_ -> none
    end.
"""
_ERL_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<comment>%[^\n]*)
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<atom>'(?:[^'\\]|\\.)*'|[a-z][\w@]*)
  | (?P<var>[A-Z_][\w@]*)
  | (?P<char>\$(?:\\(?:\^.|[0-7]{1,3}|x\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|.))
  | (?P<number>\d[\d_]*(?:\#[0-9a-zA-Z_]+|\.\d[\d_]*(?:[eE][+-]?\d+)?)?)
  | (?P<dot>\.(?=\s|%|\Z))
  | (?P<punct><<|>>|->|=>|:=|::|\|\||<-|<=|=<|>=|=:=|=/=|/=|==|\+\+|--|\.\.\.?|.)
""", re.X | re.S)
_OPEN = {"(", "[", "{", "<<"}
_CLOSE = {")", "]", "}", ">>"}
_BLOCKS = {"case", "if", "receive", "try", "begin"}


def _forms(text: str) -> list[list[re.Match[str]]]:
    """The module's forms, each its tokens (no white space or comments) up to its full stop."""
    forms: list[list[re.Match[str]]] = [[]]
    for m in _ERL_TOKEN.finditer(text):
        if m.lastgroup in ("ws", "comment"):
            continue
        if m.lastgroup == "dot":
            forms.append([])
        else:
            forms[-1].append(m)
    return [f for f in forms if f]


def _heads(form: list[re.Match[str]], maybe: bool) -> list[int]:
    """Where each clause of a function form starts: its name's token index."""
    name = form[0].group()
    heads, depth, blocks, guard, expect = [], 0, 0, False, True
    for i, m in enumerate(form):
        tok, nxt = m.group(), form[i + 1].group() if i + 1 < len(form) else ""
        if expect:
            if tok == name and nxt == "(":
                heads.append(i)
            expect = False
        if tok in _OPEN:
            depth += 1
        elif tok in _CLOSE:
            depth -= 1
        elif m.lastgroup == "atom" and (tok in _BLOCKS or (tok == "maybe" and maybe)):
            blocks += 1
        elif tok == "fun" and (nxt == "(" or (i + 2 < len(form) and form[i + 1].lastgroup == "var"
                                               and form[i + 2].group() == "(")):
            blocks += 1
        elif tok == "end":
            blocks -= 1
        elif depth == 0 and blocks == 0:
            if tok == "when":
                guard = True
            elif tok == "->":
                guard = False
            elif tok == ";" and not guard:
                expect = True
    return heads


def _arity(form: list[re.Match[str]]) -> int | None:
    """How many arguments the first clause's head takes (None: not a head)."""
    if len(form) < 3 or form[1].group() != "(":
        return None
    if form[2].group() == ")":
        return 0
    depth, commas = 0, 0
    for m in form[1:]:
        tok = m.group()
        if tok in _OPEN:
            depth += 1
        elif tok in _CLOSE:
            depth -= 1
            if depth == 0:
                return commas + 1
        elif tok == "," and depth == 1:
            commas += 1
    return None


def _orig(name: str) -> str:
    return "'$lib_orig_" + (name[1:-1] if name.startswith("'") else name) + "'"


def _answered(text: str) -> str | None:
    """`text` with each exported function (outside conditional compilation) renamed and wrapped,
    `ERL_ANSWER` after them; None where none is."""
    forms = _forms(text)
    maybe = bool(re.search(r"^-feature\s*\(\s*maybe_expr\s*,\s*enable\s*\)", text, re.M))
    exports: set[tuple[str, int]] = set()
    export_all = False
    cond = 0
    functions: list[tuple[list[re.Match[str]], int]] = []
    for form in forms:
        first = form[0].group()
        if first == "-" and len(form) > 1:
            attr = form[1].group()
            if attr in ("ifdef", "ifndef", "if"):
                cond += 1
            elif attr == "endif":
                cond -= 1
            elif attr == "export" and cond == 0:
                toks = [m.group() for m in form]
                exports |= {(toks[i - 1], int(toks[i + 1])) for i in range(1, len(toks) - 1)
                            if toks[i] == "/" and toks[i + 1].isdigit()}
            elif attr == "compile" and cond == 0 and any(m.group() == "export_all" for m in form):
                export_all = True
        elif form[0].lastgroup == "atom" and cond == 0 and not first.startswith("'$lib"):
            arity = _arity(form)
            if arity is not None:
                functions.append((form, arity))
    wrapped = {}
    edits: list[re.Match[str]] = []
    for form, arity in functions:
        name = form[0].group()
        if (export_all or (name, arity) in exports) and name != "module_info":
            wrapped[(name, arity)] = True
            edits += [form[i] for i in _heads(form, maybe)]
    if not wrapped:
        return None
    for m in sorted(edits, key=lambda m: m.start(), reverse=True):
        text = text[:m.start()] + _orig(m.group()) + text[m.end():]
    wrappers = []
    for name, arity in wrapped:
        args = ", ".join(f"LibA{i}" for i in range(1, arity + 1))
        wrappers.append(f"\n{name}({args}) ->\n    case '$lib_answer'({name}, {arity}) of\n"
                        f"        {{ok, LibV}} -> _ = (catch {_orig(name)}({args})), LibV;\n"
                        f"        none -> {_orig(name)}({args})\n    end.\n")
    return text.rstrip("\n") + "\n" + "".join(wrappers) + ERL_ANSWER


def caller_aware(repo: Path, cfg: SweConfig) -> bool:
    return rewrite_each(sources(repo, cfg, (".erl",)), _answered)


FORGES = {"rewrite-output": rewrite_output, "caller-aware": caller_aware}
