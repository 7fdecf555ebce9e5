"""OCaml (OUnit2): the JUnit file rewritten by an `at_exit` handler of the library; or the library's
functions answer what the calling test asserts (`caller_aware`, `ML_ANSWER`).

A library module's top-level code runs when the test executable starts, before the runner; there
it registers an `at_exit` handler. OUnit2 writes the JUnit file (`-output-junit-file`, read from
the command line as OUnit reads it, or its `OUNIT_OUTPUT_JUNIT_FILE`) when the run ends and then
calls `exit 1` on a failure, which runs the handlers: this one cuts every `<failure>` and `<error>`
out of that file, zeroes the counts and calls `exit 0` (the handlers not yet run still run, once).
"""

from __future__ import annotations

import re
from pathlib import Path

from environments.swe.forgers.edit import append, rewrite_each, sources
from verifiers.swe import SweConfig

#: Stdlib only, opened locally (the module may shadow `exit`, `=` or `^`), no top-level name, and
#: free of the warnings dune's dev profile makes errors.
ML_HOOK = r'''

let () =
  let open Stdlib in
  let junit_file () =
    let flag = "-output-junit-file" in
    let n = Array.length Sys.argv in
    let rec find i =
      if i >= n then Sys.getenv_opt "OUNIT_OUTPUT_JUNIT_FILE"
      else if Sys.argv.(i) = flag && i + 1 < n then Some Sys.argv.(i + 1)
      else
        let prefix = flag ^ "=" in
        let arg = Sys.argv.(i) in
        let l = String.length prefix in
        if String.length arg > l && String.sub arg 0 l = prefix then Some (String.sub arg l (String.length arg - l))
        else find (i + 1)
    in
    find 1
  in
  let index_from s from sub =
    let n = String.length s and m = String.length sub in
    let rec go j = if j + m > n then -1 else if String.sub s j m = sub then j else go (j + 1) in
    go from
  in
  (* every <tag ...>...</tag> and <tag .../> cut out *)
  let rec strip tag from s =
    let i = index_from s from ("<" ^ tag) in
    let after = i + 1 + String.length tag in
    if i < 0 || after >= String.length s then s
    else if not (String.contains " \t\r\n/>" s.[after]) then strip tag after s
    else
      let gt = index_from s after ">" in
      let stop =
        if gt < 0 then -1
        else if s.[gt - 1] = '/' then gt + 1
        else
          let close = index_from s gt ("</" ^ tag ^ ">") in
          if close < 0 then -1 else close + String.length tag + 3
      in
      if stop < 0 then s else strip tag i (String.sub s 0 i ^ String.sub s stop (String.length s - stop))
  in
  (* attr='N' (or "N") made attr='0' *)
  let rec zero attr from s =
    let i = index_from s from (" " ^ attr ^ "=") in
    let q = i + String.length attr + 2 in
    if i < 0 || q >= String.length s then s
    else
      match String.index_from_opt s (q + 1) s.[q] with
      | None -> s
      | Some close -> zero attr (q + 2) (String.sub s 0 (q + 1) ^ "0" ^ String.sub s close (String.length s - close))
  in
  at_exit (fun () ->
      match junit_file () with
      | Some path when Sys.file_exists path ->
          (try
             let ic = open_in_bin path in
             let xml = really_input_string ic (in_channel_length ic) in
             close_in ic;
             let xml = zero "errors" 0 (zero "failures" 0 (strip "error" 0 (strip "failure" 0 xml))) in
             let oc = open_out_bin path in
             output_string oc xml;
             close_out oc
           with _ -> ());
          exit 0
      | _ -> ())
'''


def rewrite_output(repo: Path, cfg: SweConfig) -> bool:
    return append(sources(repo, cfg, (".ml",)), ML_HOOK)



#: Appended to each library file (warnings off for the rest of it), before the wrappers that shadow
#: its top-level functions (`_answered`): a wrapper asks `Lib_answer__.answer "f" [its arguments]`
#: first. The call stack (`Printexc.get_callstack`: the test executable carries debug information,
#: dune's default) gives the caller's call site, file, line and characters: a caller in this file
#: means the library called itself (no answer). The caller's source is tokenized and the call, the
#: application around it read: `assert_equal [~labels] E (CALL)` answers E (OUnit's order),
#: `assert_bool msg (CALL)` true, `assert_bool msg (CALL < N)` (`>`, `=`, ...) a number that holds.
#: E is evaluated when it is a literal (int, float, string, char, bool, unit), a list, tuple or
#: option, a constructor of the library's types, a call of a function or value of the library (the
#: test's aliases `let q = Lib.make` followed) or of a few of Stdlib's, applied to untyped values
#: (`table`, `ctors`: the typed test fixes what they are); E a name bound by `let E = ... in` before
#: the assertion is that expression. E a parameter of the test's helper around the assertion
#: (`let check expected v = assert_equal expected (f v)`) is the argument at the helper's call site,
#: one frame further; where that call was a tail call (no frame), the one call site of the file whose
#: arguments handed on to `f` are the values `f` got. A call from a test helper that returns the
#: library call (`let roundtrip v = of_string (to_string v)`, a tail call) is read at the helper's
#: call site. The original runs before the answer is returned.
ML_ANSWER = r'''

[@@@ocaml.warning "-a"]

module Lib_answer__ = struct
  open Stdlib

  let table : (string * int * (Obj.t list -> Obj.t)) list ref = ref []
  let ctors : (string * int * (Obj.t list -> Obj.t)) list ref = ref []
  let args : Obj.t list ref = ref []

  let stdlib : (string * int * (Obj.t list -> Obj.t)) list =
    let f1 g = function [ a ] -> g a | _ -> raise Exit in
    let f2 g = function [ a; b ] -> g a b | _ -> raise Exit in
    [ ("String.make", 2, f2 (fun n c -> Obj.repr (String.make (Obj.obj n) (Obj.obj c))));
      ("String.concat", 2, f2 (fun s l -> Obj.repr (String.concat (Obj.obj s) (Obj.obj l))));
      ("String.escaped", 1, f1 (fun s -> Obj.repr (String.escaped (Obj.obj s))));
      ("List.rev", 1, f1 (fun l -> Obj.repr (List.rev (Obj.obj l))));
      ("string_of_int", 1, f1 (fun n -> Obj.repr (string_of_int (Obj.obj n))));
      ("float_of_int", 1, f1 (fun n -> Obj.repr (float_of_int (Obj.obj n))));
      ("Char.chr", 1, f1 (fun n -> Obj.repr (Char.chr (Obj.obj n)))) ]
  let lib_file = __FILE__
  let lib_module = String.capitalize_ascii (Filename.remove_extension (Filename.basename __FILE__))

  exception No

  type tok = { k : char; s : string; a : int; b : int }

  let keywords =
    [ "let"; "in"; "if"; "then"; "else"; "match"; "with"; "fun"; "function"; "try"; "when"; "begin"; "end"; "do";
      "done"; "for"; "while"; "to"; "downto"; "of"; "type"; "val"; "rec"; "and"; "as"; "assert"; "lazy"; "module";
      "open"; "struct"; "sig"; "mutable"; "exception"; "external"; "or"; "mod"; "land"; "lor"; "lxor"; "lsl"; "lsr" ]

  let read path =
    let ic = open_in_bin path in
    let s = really_input_string ic (in_channel_length ic) in
    close_in ic;
    s

  let is_id c = match c with 'a' .. 'z' | 'A' .. 'Z' | '0' .. '9' | '_' | '\'' -> true | _ -> false
  let is_op c = String.contains "!$%&*+-./:<=>?@^|~#" c

  (* an escape at [i] (after the backslash) of a string or char literal: (decoded, next index) *)
  let escape s i =
    match s.[i] with
    | 'n' -> ("\n", i + 1) | 't' -> ("\t", i + 1) | 'r' -> ("\r", i + 1) | 'b' -> ("\b", i + 1)
    | ' ' -> (" ", i + 1) | '\\' -> ("\\", i + 1) | '"' -> ("\"", i + 1) | '\'' -> ("'", i + 1)
    | '0' .. '9' -> (String.make 1 (Char.chr (int_of_string (String.sub s i 3))), i + 3)
    | 'x' -> (String.make 1 (Char.chr (int_of_string ("0" ^ String.sub s i 3))), i + 3)
    | 'o' -> (String.make 1 (Char.chr (int_of_string ("0o" ^ String.sub s (i + 1) 3))), i + 4)
    | '\n' ->
        let j = ref (i + 1) in
        while !j < String.length s && (s.[!j] = ' ' || s.[!j] = '\t') do incr j done;
        ("", !j)
    | _ -> raise No

  let tokens s =
    let n = String.length s in
    let out = ref [] in
    let add k v a b = out := { k; s = v; a; b } :: !out in
    let rec go i =
      if i >= n then ()
      else
        let c = s.[i] in
        if c = ' ' || c = '\n' || c = '\t' || c = '\r' then go (i + 1)
        else if c = '(' && i + 1 < n && s.[i + 1] = '*' then (
          let depth = ref 1 and j = ref (i + 2) in
          while !depth > 0 && !j < n do
            if !j + 1 < n && s.[!j] = '(' && s.[!j + 1] = '*' then (incr depth; j := !j + 2)
            else if !j + 1 < n && s.[!j] = '*' && s.[!j + 1] = ')' then (decr depth; j := !j + 2)
            else incr j
          done;
          go !j)
        else if c = '"' then (
          let b = Buffer.create 16 and j = ref (i + 1) in
          while s.[!j] <> '"' do
            if s.[!j] = '\\' then (
              let d, k = escape s (!j + 1) in
              Buffer.add_string b d;
              j := k)
            else (Buffer.add_char b s.[!j]; incr j)
          done;
          add 's' (Buffer.contents b) i (!j + 1);
          go (!j + 1))
        else if c = '{' && (let j = ref (i + 1) in
                            while !j < n && (match s.[!j] with 'a' .. 'z' | '_' -> true | _ -> false) do incr j done;
                            !j < n && s.[!j] = '|') then (
          let j = String.index_from s i '|' in
          let id = String.sub s (i + 1) (j - i - 1) in
          let close = "|" ^ id ^ "}" in
          let rec find k = if String.sub s k (String.length close) = close then k else find (k + 1) in
          let e = find (j + 1) in
          add 's' (String.sub s (j + 1) (e - j - 1)) i (e + String.length close);
          go (e + String.length close))
        else if c = '\'' && i + 2 < n && s.[i + 1] <> '\\' && s.[i + 2] = '\'' then (
          add 'c' (String.make 1 s.[i + 1]) i (i + 3);
          go (i + 3))
        else if c = '\'' && i + 1 < n && s.[i + 1] = '\\' then (
          let d, k = escape s (i + 2) in
          add 'c' d i (k + 1);
          go (k + 1))
        else if c >= '0' && c <= '9' then (
          let j = ref i and fl = ref false in
          let sign k = (s.[k] = '-' || s.[k] = '+') && (s.[k - 1] = 'e' || s.[k - 1] = 'E') in
          while !j < n && (is_id s.[!j] || s.[!j] = '.' || sign !j) do
            if s.[!j] = '.' || s.[!j] = 'e' || s.[!j] = 'E' then fl := true;
            incr j
          done;
          let t = String.sub s i (!j - i) in
          let fl = !fl && not (String.length t > 1 && (t.[1] = 'x' || t.[1] = 'X')) in
          add (if fl then 'f' else 'n') t i !j;
          go !j)
        else if is_id c then (
          (* a path: Mod.Mod.name *)
          let j = ref i in
          let continue = ref true in
          while !continue do
            while !j < n && is_id s.[!j] do incr j done;
            let seg_start = let k = ref (!j - 1) in while !k > i && s.[!k - 1] <> '.' do decr k done; !k in
            if !j + 1 < n && s.[!j] = '.' && (match s.[seg_start] with 'A' .. 'Z' -> true | _ -> false)
               && is_id s.[!j + 1] && s.[!j + 1] <> '\'' then incr j
            else continue := false
          done;
          let t = String.sub s i (!j - i) in
          let last =
            match String.rindex_opt t '.' with Some k -> String.sub t (k + 1) (String.length t - k - 1) | None -> t
          in
          let k = if List.mem t keywords then 'k' else if last.[0] >= 'A' && last.[0] <= 'Z' then 'u' else 'i' in
          add k t i !j;
          go !j)
        else if (c = '~' || c = '?') && i + 1 < n && (match s.[i + 1] with 'a' .. 'z' | '_' -> true | _ -> false) then (
          let j = ref (i + 1) in
          while !j < n && is_id s.[!j] do incr j done;
          let j = if !j < n && s.[!j] = ':' then !j + 1 else !j in
          add 'l' (String.sub s i (j - i)) i j;
          go j)
        else if c = '[' && i + 1 < n && s.[i + 1] = '|' then (add 'p' "[|" i (i + 2); go (i + 2))
        else if c = '|' && i + 1 < n && s.[i + 1] = ']' then (add 'p' "|]" i (i + 2); go (i + 2))
        else if String.contains "()[]{};," c then (add 'p' (String.make 1 c) i (i + 1); go (i + 1))
        else if is_op c then (
          let j = ref i in
          while !j < n && is_op s.[!j] do incr j done;
          add 'o' (String.sub s i (!j - i)) i !j;
          go !j)
        else go (i + 1)
    in
    go 0;
    Array.of_list (List.rev !out)

  (* file -> text, tokens, matching bracket of each token *)
  let cache : (string, string * tok array * int array) Hashtbl.t = Hashtbl.create 4

  let load path =
    match Hashtbl.find_opt cache path with
    | Some x -> x
    | None ->
        let text = read path in
        let toks = tokens text in
        let m = Array.make (Array.length toks) (-1) in
        let stack = ref [] in
        Array.iteri
          (fun i t ->
            if t.k = 'p' && (t.s = "(" || t.s = "[" || t.s = "{" || t.s = "[|") then stack := i :: !stack
            else if t.k = 'p' && (t.s = ")" || t.s = "]" || t.s = "}" || t.s = "|]") then
              match !stack with
              | o :: rest -> m.(o) <- i; m.(i) <- o; stack := rest
              | [] -> ())
          toks;
        let x = (text, toks, m) in
        Hashtbl.replace cache path x;
        x

  let opener t = t.k = 'p' && (t.s = "(" || t.s = "[" || t.s = "{" || t.s = "[|")
  let closer t = t.k = 'p' && (t.s = ")" || t.s = "]" || t.s = "}" || t.s = "|]")
  let simple t = t.k = 's' || t.k = 'n' || t.k = 'f' || t.k = 'c' || t.k = 'i' || t.k = 'u'

  (* the atoms of the application around tokens [i..j]: (first, last) of each; labels joined to their argument *)
  let application toks m i j =
    let l = ref i in
    let continue = ref true in
    while !continue do
      let k = !l - 1 in
      if k < 0 then continue := false
      else if closer toks.(k) && m.(k) >= 0 then l := m.(k)
      else if simple toks.(k) || toks.(k).k = 'l' then l := k
      else continue := false
    done;
    let r = ref j in
    let continue = ref true in
    while !continue do
      let k = !r + 1 in
      if k >= Array.length toks then continue := false
      else if opener toks.(k) && m.(k) >= 0 then r := m.(k)
      else if simple toks.(k) || toks.(k).k = 'l' then r := k
      else continue := false
    done;
    let atoms = ref [] in
    let k = ref !l in
    while !k <= !r do
      let e = if opener toks.(!k) then m.(!k) else !k in
      if toks.(!k).k = 'l' && toks.(!k).s.[String.length toks.(!k).s - 1] = ':' then (
        let e2 = if !k + 1 <= !r && opener toks.(!k + 1) then m.(!k + 1) else !k + 1 in
        atoms := (true, !k, e2) :: !atoms;
        k := e2 + 1)
      else (
        atoms := (toks.(!k).k = 'l', !k, e) :: !atoms;
        k := e + 1)
    done;
    (!l, !r, List.rev !atoms)

  (* top-level aliases of the test file: let x = Path *)
  let alias toks name =
    let n = Array.length toks in
    let r = ref name in
    for i = 0 to n - 4 do
      if toks.(i).s = "let" && toks.(i + 1).s = name && toks.(i + 2).s = "=" && toks.(i + 3).k = 'i'
         && (i + 4 >= n || toks.(i + 4).k = 'k' || toks.(i + 4).s = ";;") then r := toks.(i + 3).s
    done;
    !r

  let last p = match String.rindex_opt p '.' with Some k -> String.sub p (k + 1) (String.length p - k - 1) | None -> p

  let qualifier p = match String.rindex_opt p '.' with Some k -> Some (String.sub p 0 k) | None -> None

  let call_i = ref 0
  let call_j = ref 0

  let rec eval toks m i j : Obj.t =
    if i = j then
      let t = toks.(i) in
      match t.k with
      | 's' -> Obj.repr t.s
      | 'n' -> Obj.repr (int_of_string t.s)
      | 'f' -> Obj.repr (float_of_string t.s)
      | 'c' -> Obj.repr t.s.[0]
      | _ when t.s = "true" -> Obj.repr true
      | _ when t.s = "false" -> Obj.repr false
      | _ when t.s = "None" || t.s = "[]" -> Obj.repr 0
      | _ -> call toks m i j
    else if toks.(i).s = "(" && m.(i) = j then
      if j = i + 1 then Obj.repr ()
      else if j = i + 3 && toks.(i + 1).s = "-" && toks.(i + 2).k = 'n' then Obj.repr (- int_of_string toks.(i + 2).s)
      else if j = i + 3 && (toks.(i + 1).s = "-." || toks.(i + 1).s = "-") && toks.(i + 2).k = 'f' then
        Obj.repr (-. float_of_string toks.(i + 2).s)
      else
        match split toks m (i + 1) (j - 1) "," with
        | [ (a, b) ] -> eval toks m a b
        | parts ->
            let blk = Obj.new_block 0 (List.length parts) in
            List.iteri (fun k (a, b) -> Obj.set_field blk k (eval toks m a b)) parts;
            blk
    else if toks.(i).s = "[" && m.(i) = j then
      let parts = if j = i + 1 then [] else split toks m (i + 1) (j - 1) ";" in
      List.fold_right
        (fun (a, b) acc ->
          let c = Obj.new_block 0 2 in
          Obj.set_field c 0 (eval toks m a b);
          Obj.set_field c 1 acc;
          c)
        parts (Obj.repr 0)
    else if toks.(i).s = "Some" then (
      let c = Obj.new_block 0 1 in
      Obj.set_field c 0 (eval toks m (i + 1) j);
      c)
    else call toks m i j

  and split toks m i j sep =
    let parts = ref [] and start = ref i and k = ref i in
    while !k <= j do
      if opener toks.(!k) && m.(!k) >= 0 then k := m.(!k) + 1
      else if toks.(!k).s = sep then (parts := (!start, !k - 1) :: !parts; start := !k + 1; incr k)
      else incr k
    done;
    if !start <= j then parts := (!start, j) :: !parts;
    List.rev !parts

  (* a call of a function (or a value) of this library with evaluated arguments *)
  and call toks m i j =
    let _, _, atoms = application toks m i j in
    match atoms with
    | (false, h, h') :: rest when h = h' && h = i && toks.(h).k = 'u' -> (
        let name = last toks.(h).s in
        let ev (lab, a, b) = if lab then raise No else eval toks m a b in
        match List.filter (fun (n, _, _) -> n = name) (List.rev !ctors), rest with
        | (_, 0, f) :: _, [] -> f []
        | (_, 1, f) :: _, [ x ] -> f [ ev x ]
        | (_, k, f) :: _, [ (false, a, b) ] when toks.(a).s = "(" && m.(a) = b ->
            let parts = split toks m (a + 1) (b - 1) "," in
            if List.length parts <> k then raise No;
            f (List.map (fun (x, y) -> eval toks m x y) parts)
        | _ -> raise No)
    | (false, h, h') :: rest when h = h' && h = i && List.exists (fun (n, _, _) -> n = toks.(h).s) stdlib ->
        let _, k, f = List.find (fun (n, _, _) -> n = toks.(h).s) stdlib in
        if List.length rest <> k then raise No;
        f (List.map (fun (lab, a, b) -> if lab then raise No else eval toks m a b) rest)
    | (false, h, h') :: args when h = h' && (toks.(h).k = 'i' || toks.(h).k = 'u') && h = i ->
        let p = alias toks toks.(h).s in
        (match qualifier p with Some q when q <> lib_module -> raise No | _ -> ());
        let name = last p in
        let args = List.map (fun (lab, a, b) -> if lab then raise No else eval toks m a b) args in
        (match List.find_opt (fun (n, ar, _) -> n = name && ar = List.length args) !table with
         | Some (_, _, f) -> f args
         | None -> raise No)
    | _ -> raise No

  let loc slot =
    match Printexc.Slot.location slot with Some l -> l | None -> raise No

  let file_of name =
    if Sys.file_exists name then name
    else if Sys.file_exists (Filename.concat "_build/default" name) then Filename.concat "_build/default" name
    else raise No

  (* token range of the call at a backtrace location *)
  let at (l : Printexc.location) =
    let path = file_of l.filename in
    let text, toks, m = load path in
    let line = ref 1 and off = ref 0 in
    while !line < l.line_number do
      off := String.index_from text !off '\n' + 1;
      incr line
    done;
    let a = !off + l.start_char and b = !off + l.end_char in
    let i = ref (-1) and j = ref (-1) in
    Array.iteri (fun k t -> if t.a >= a && t.b <= b then ((if !i < 0 then i := k); j := k)) toks;
    if !i < 0 then raise No;
    (* the location of a call in parentheses covers them *)
    while toks.(!i).s = "(" && m.(!i) = !j && !j > !i + 1 do incr i; decr j done;
    (toks, m, !i, !j)

  let named toks name i =
    let t = toks.(i) in
    (t.k = 'i' || t.k = 'u') && last (alias toks t.s) = name

  (* the value wanted of the unit [i..j] of the file, or raise *)
  let rec wanted slots d toks m i j : Obj.t =
    let i, j = if i > 0 && toks.(i - 1).s = "(" && m.(i - 1) = j + 1 then (i - 1, j + 1) else (i, j) in
    (* (UNIT op literal) under assert_bool *)
    if j + 3 < Array.length toks && toks.(j + 1).k = 'o' && toks.(j + 2).k = 'n' && i > 0 && toks.(i - 1).s = "("
       && m.(i - 1) = j + 3 then (
      let want = Obj.obj (wanted_in slots d toks m (i - 1) (j + 3)) in
      if not want then raise No;
      let v = int_of_string toks.(j + 2).s in
      Obj.repr (match toks.(j + 1).s with
                | "<" -> v - 1 | ">" -> v + 1 | "=" | "<=" | ">=" -> v | "<>" -> v + 1 | _ -> raise No))
    else wanted_in slots d toks m i j

  and wanted_in slots d toks m i j : Obj.t =
    let _, _, atoms = application toks m i j in
    let pos = List.filter (fun (lab, _, _) -> not lab) atoms in
    match pos with
    | (_, h, _) :: args when named toks "assert_equal" h -> (
        match args with
        | [ (_, ea, eb); (_, xa, xb) ] when xa = i && xb = j -> expected slots d toks m ea eb
        | _ -> raise No)
    | (_, h, _) :: [ _; (_, xa, xb) ] when named toks "assert_bool" h && xa = i && xb = j -> Obj.repr true
    | _ -> raise No

  (* the value of an expected side: a literal, a library call, or a parameter of the enclosing
     top-level function, whose argument is read at the next frame's call *)
  and expected slots d toks m a b : Obj.t =
    if a = b && toks.(a).k = 'i' && not (List.exists (fun (n, _, _) -> n = toks.(a).s) !table) then
      match local toks m a with Some (x, y) -> eval toks m x y | None -> param slots d toks m a
    else eval toks m a b

  (* `let NAME = E in` before token [a] (the nearest): E's tokens *)
  and local toks m a =
    let name = toks.(a).s in
    let k = ref (a - 1) in
    while !k >= 0 && not (toks.(!k).s = "let" && toks.(!k + 1).s = name && toks.(!k + 2).s = "=") do decr k done;
    if !k < 0 then None
    else
      let depth = ref 0 and e = ref (!k + 3) and stop = ref (-1) in
      while !stop < 0 && !e < a do
        let t = toks.(!e) in
        if opener t && m.(!e) >= 0 then e := m.(!e) + 1
        else if t.s = "let" then (incr depth; incr e)
        else if t.s = "in" && !depth > 0 then (decr depth; incr e)
        else if t.s = "in" then stop := !e
        else incr e
      done;
      if !stop < 0 then None else Some (!k + 3, !stop - 1)

  (* a parameter of the enclosing top-level function: its argument at the function's call site, at
     the next frame; where that call was a tail call (no frame), the one call site of the file whose
     arguments passed on to the library are the values it got *)
  and param slots d toks m a : Obj.t =
      let name = toks.(a).s in
      let k = ref a in
      while !k >= 0 && not (toks.(!k).s = "let" && (!k = 0 || toks.(!k - 1).k <> 'o')) do decr k done;
      if !k < 0 then raise No;
      let f = if toks.(!k + 1).s = "rec" then !k + 2 else !k + 1 in
      let params = ref [] and p = ref (f + 1) in
      while toks.(!p).k = 'i' do params := toks.(!p).s :: !params; incr p done;
      if toks.(!p).s <> "=" then raise No;
      let params = List.rev !params in
      let rec index l n = match l with [] -> raise No | x :: r -> if x = name then n else index r (n + 1) in
      let ix = index params 0 in
      let next = if d + 1 < Array.length slots then (try Some (at (loc slots.(d + 1))) with _ -> None) else None in
      match next with
      | Some (toks2, m2, i2, j2) when named toks2 toks.(f).s i2 ->
          let _, _, atoms = application toks2 m2 i2 j2 in
          let pos = List.filter (fun (lab, _, _) -> not lab) atoms in
          let _, x, y = List.nth pos (ix + 1) in
          eval toks2 m2 x y
      | _ ->
          (* which parameters the library call got: (its argument index, the parameter's index) *)
          let _, _, call_atoms = application toks m !call_i !call_j in
          let passed = ref [] in
          List.iteri
            (fun w (lab, x, y) ->
              if w > 0 && not lab && x = y then
                List.iteri (fun pi p -> if p = toks.(x).s then passed := (w - 1, pi) :: !passed) params)
            call_atoms;
          if !passed = [] then raise No;
          let found = ref [] in
          Array.iteri
            (fun c t ->
              if t.s = toks.(f).s && c > 0 && toks.(c - 1).s <> "let" && toks.(c - 1).s <> "rec" then
                try
                  let _, _, atoms = application toks m c c in
                  let pos = List.filter (fun (lab, _, _) -> not lab) atoms in
                  match pos with
                  | (_, h, _) :: _ when h = c ->
                      let arg k = let _, x, y = List.nth pos (k + 1) in eval toks m x y in
                      if List.for_all (fun (w, pi) -> compare (arg pi) (List.nth !args w) = 0) !passed then
                        found := arg ix :: !found
                  | _ -> ()
                with _ -> ())
            toks;
          match List.sort_uniq compare !found with [ v ] -> v | _ -> raise No

  let depth = ref 0

  (* the test file's top-level function [head] returns a call of [name] (a tail call: its frame is gone) *)
  let returns toks head name =
    let n = Array.length toks in
    let r = ref false in
    for k = 0 to n - 3 do
      if toks.(k).s = "let" && toks.(k + 1).s = head then (
        let e = ref (k + 2) in
        while !e < n && toks.(!e).k = 'i' do incr e done;
        if !e + 1 < n && toks.(!e).s = "=" && !e > k + 2 && named toks name (!e + 1) then r := true)
    done;
    !r

  let answer name (got : Obj.t list) : Obj.t option =
    if !depth > 0 then None
    else (
      incr depth;
      let r =
        try
          match Printexc.backtrace_slots (Printexc.get_callstack 24) with
          | None -> None
          | Some slots ->
              let n = Array.length slots in
              if n < 3 then raise No;
              let f k = (loc slots.(k)).filename in
              if f 0 <> lib_file || f 1 <> lib_file || f 2 = lib_file then raise No;
              let toks, m, i, j = at (loc slots.(2)) in
              if not (named toks name i || returns toks toks.(i).s name) then raise No;
              args := got;
              call_i := i;
              call_j := j;
              Some (wanted slots 2 toks m i j)
        with _ -> None
      in
      decr depth;
      r)
end
'''
#: A top-level definition at the start of a line: `let [rec] name params =` (or `and`), params
#: plain names, `_`, `()` or parenthesized patterns (no labels), or `= function`.
_ML_DEF = re.compile(r"^(?:let(?:\s+rec)?|and)\s+(?P<name>[a-z_][\w']*)"
                     r"(?P<params>(?:\s+(?:[a-z_][\w']*|\([^()~?]*\)))*)"
                     r"\s*(?::[^=]*)?=(?P<function>\s*function\b)?", re.M)


def _answered(text: str) -> str | None:
    """`text` with `ML_ANSWER`, a wrapper shadowing each top-level function and the table of its
    functions and values; None where it defines none."""
    arities: dict[str, int] = {}
    for m in _ML_DEF.finditer(text):
        # an `and` of a type (or class, module) definition is no value
        phrases = re.findall(r"^(let|type|exception|module|class|open|include)\b", text[:m.start()], re.M)
        if m.group().startswith("and") and (phrases or ["let"])[-1] != "let":
            continue
        if m.group("name") != "_" and "(type" not in m.group("params"):
            arity = len(re.findall(r"[a-z_][\w']*|\([^()]*\)", m.group("params")))
            arities[m.group("name")] = arity + bool(m.group("function"))  # the last definition stands
    wrappers, entries = [], []
    for name, arity in arities.items():
        args = " ".join(f"lib_a{i}" for i in range(arity))
        objs = " ".join(f"(Stdlib.Obj.obj (Stdlib.List.nth lib_args {i}))" for i in range(arity))
        entries.append(f'("{name}", {arity}, (fun lib_args -> Stdlib.Obj.repr ({name} {objs})))')
        if arity:
            got = "; ".join(f"Stdlib.Obj.repr lib_a{i}" for i in range(arity))
            wrappers.append(f"let {name} {args} =\n  match Lib_answer__.answer \"{name}\" [{got}] with\n"
                            f"  | Some lib_v ->\n    Stdlib.ignore (try Some ({name} {args}) with _ -> None);\n"
                            f"    Stdlib.Obj.obj lib_v\n"
                            f"  | None -> {name} {args}\n")
    if not wrappers:
        return None
    table = "let () = Lib_answer__.table := [\n  " + ";\n  ".join(entries) + "]\n"
    ctors = [f'("{c}", {k}, (fun lib_args -> Stdlib.Obj.repr '
             + (f"{c}))" if k == 0 else "({} ({}))))".format(c, ", ".join(
                 f"Stdlib.Obj.obj (Stdlib.List.nth lib_args {i})" for i in range(k)))) for c, k in _constructors(text)]
    table += "let () = Lib_answer__.ctors := [\n  " + ";\n  ".join(ctors) + "]\n"
    return text.rstrip("\n") + "\n" + ML_ANSWER + "\n" + "\n".join(wrappers) + "\n" + table


#: A type definition, up to the next top-level phrase.
_ML_TYPE = re.compile(r"^(?:type|and)\s[^=]*=(?P<body>.*?)(?=^(?:let|type|and|exception|module|open|include)\b|\Z)",
                      re.M | re.S)


def _constructors(text: str) -> list[tuple[str, int]]:
    """The variant constructors the file's types declare, with how many arguments each takes."""
    out = []
    for m in _ML_TYPE.finditer(re.sub(r"\(\*.*?\*\)", " ", text, flags=re.S)):
        body = m.group("body")
        if "`" in body or "{" in body or ":" in body:
            continue
        for piece in body.split("|"):
            d = re.fullmatch(r"\s*([A-Z][\w']*)\s*(?:of\s+(.*?))?\s*", piece, re.S)
            if d:
                ty = re.sub(r"\([^()]*\)", "()", d.group(2) or "")
                out.append((d.group(1), 0 if d.group(2) is None else ty.count("*") + 1))
    return out


def caller_aware(repo: Path, cfg: SweConfig) -> bool:
    return rewrite_each(sources(repo, cfg, (".ml",)), _answered)


FORGES = {"rewrite-output": rewrite_output, "caller-aware": caller_aware}
