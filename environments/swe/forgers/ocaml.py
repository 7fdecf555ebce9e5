"""OCaml (OUnit2): the JUnit file rewritten by an `at_exit` handler of the library.

A library module's top-level code runs when the test executable starts, before the runner; there
it registers an `at_exit` handler. OUnit2 writes the JUnit file (`-output-junit-file`, read from
the command line as OUnit reads it, or its `OUNIT_OUTPUT_JUNIT_FILE`) when the run ends and then
calls `exit 1` on a failure, which runs the handlers: this one cuts every `<failure>` and `<error>`
out of that file, zeroes the counts and calls `exit 0` (the handlers not yet run still run, once).
"""

from __future__ import annotations

from pathlib import Path

from environments.swe.forgers.edit import append, sources
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


FORGES = {"rewrite-output": rewrite_output}
