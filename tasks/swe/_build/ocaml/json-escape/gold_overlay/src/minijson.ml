(* minijson: a small JSON value type with a printer and a strict parser. *)

type t =
  | Null
  | Bool of bool
  | Number of float
  | String of string
  | Array of t list
  | Object of (string * t) list

exception Parse_error of int * string

(* ---- printing ---- *)

let escape_string s =
  let b = Buffer.create (String.length s + 2) in
  Buffer.add_char b '"';
  String.iter
    (function
      | '"' -> Buffer.add_string b "\\\""
      | '\\' -> Buffer.add_string b "\\\\"
      | '\n' -> Buffer.add_string b "\\n"
      | '\t' -> Buffer.add_string b "\\t"
      | '\r' -> Buffer.add_string b "\\r"
      | '\b' -> Buffer.add_string b "\\b"
      | '\012' -> Buffer.add_string b "\\f"
      | c when Char.code c < 0x20 -> Buffer.add_string b (Printf.sprintf "\\u%04x" (Char.code c))
      | c -> Buffer.add_char b c)
    s;
  Buffer.add_char b '"';
  Buffer.contents b

let number_to_string f =
  if Float.is_integer f && Float.abs f < 1e15 then Printf.sprintf "%.0f" f
  else Printf.sprintf "%.17g" f

let rec to_string = function
  | Null -> "null"
  | Bool true -> "true"
  | Bool false -> "false"
  | Number f ->
      if Float.is_nan f || Float.is_integer f = false && Float.abs f = Float.infinity then
        invalid_arg "minijson: NaN and infinity are not JSON"
      else number_to_string f
  | String s -> escape_string s
  | Array items -> "[" ^ String.concat "," (List.map to_string items) ^ "]"
  | Object fields ->
      "{"
      ^ String.concat ","
          (List.map (fun (k, v) -> escape_string k ^ ":" ^ to_string v) fields)
      ^ "}"

(* ---- parsing ---- *)

type state = { text : string; mutable pos : int }

let fail st msg = raise (Parse_error (st.pos, msg))
let peek st = if st.pos < String.length st.text then Some st.text.[st.pos] else None
let advance st = st.pos <- st.pos + 1

let rec skip_ws st =
  match peek st with
  | Some (' ' | '\t' | '\n' | '\r') -> advance st; skip_ws st
  | _ -> ()

let expect st c =
  if peek st = Some c then advance st else fail st (Printf.sprintf "expected '%c'" c)

let literal st word value =
  let n = String.length word in
  if st.pos + n <= String.length st.text && String.sub st.text st.pos n = word then (
    st.pos <- st.pos + n;
    value)
  else fail st ("expected " ^ word)

let add_utf8 b code =
  if code < 0x80 then Buffer.add_char b (Char.chr code)
  else if code < 0x800 then (
    Buffer.add_char b (Char.chr (0xC0 lor (code lsr 6)));
    Buffer.add_char b (Char.chr (0x80 lor (code land 0x3F))))
  else (
    Buffer.add_char b (Char.chr (0xE0 lor (code lsr 12)));
    Buffer.add_char b (Char.chr (0x80 lor ((code lsr 6) land 0x3F)));
    Buffer.add_char b (Char.chr (0x80 lor (code land 0x3F))))

let parse_string st =
  expect st '"';
  let b = Buffer.create 16 in
  let rec loop () =
    match peek st with
    | None -> fail st "unterminated string"
    | Some '"' -> advance st
    | Some '\\' ->
        advance st;
        (match peek st with
        | Some '"' -> Buffer.add_char b '"'
        | Some '\\' -> Buffer.add_char b '\\'
        | Some '/' -> Buffer.add_char b '/'
        | Some 'b' -> Buffer.add_char b '\b'
        | Some 'f' -> Buffer.add_char b '\012'
        | Some 'n' -> Buffer.add_char b '\n'
        | Some 'r' -> Buffer.add_char b '\r'
        | Some 't' -> Buffer.add_char b '\t'
        | Some 'u' ->
            if st.pos + 5 > String.length st.text then fail st "short \\u escape";
            let hex = String.sub st.text (st.pos + 1) 4 in
            (match int_of_string_opt ("0x" ^ hex) with
            | Some code -> add_utf8 b code
            | None -> fail st "bad \\u escape");
            st.pos <- st.pos + 4
        | _ -> fail st "bad escape");
        advance st;
        loop ()
    | Some c when Char.code c < 0x20 -> fail st "control character in string"
    | Some c -> Buffer.add_char b c; advance st; loop ()
  in
  loop ();
  Buffer.contents b

let parse_number st =
  let start = st.pos in
  let is_num_char = function '0' .. '9' | '-' | '+' | '.' | 'e' | 'E' -> true | _ -> false in
  while match peek st with Some c -> is_num_char c | None -> false do advance st done;
  let s = String.sub st.text start (st.pos - start) in
  match float_of_string_opt s with
  | Some f when s <> "" && s.[0] <> '+' && s.[0] <> '.' -> f
  | _ -> fail st ("bad number " ^ s)

let rec parse_value st =
  skip_ws st;
  match peek st with
  | Some 'n' -> literal st "null" Null
  | Some 't' -> literal st "true" (Bool true)
  | Some 'f' -> literal st "false" (Bool false)
  | Some '"' -> String (parse_string st)
  | Some '[' -> advance st; Array (parse_items st)
  | Some '{' -> advance st; Object (parse_fields st)
  | Some _ -> Number (parse_number st)
  | None -> fail st "unexpected end of input"

and parse_items st =
  skip_ws st;
  if peek st = Some ']' then (advance st; [])
  else
    let v = parse_value st in
    skip_ws st;
    match peek st with
    | Some ',' -> advance st; v :: parse_items_after_comma st
    | Some ']' -> advance st; [ v ]
    | _ -> fail st "expected ',' or ']'"

and parse_items_after_comma st =
  skip_ws st;
  if peek st = Some ']' then fail st "trailing comma" else parse_items st

and parse_fields st =
  skip_ws st;
  if peek st = Some '}' then (advance st; [])
  else (
    let k = parse_string st in
    skip_ws st;
    expect st ':';
    let v = parse_value st in
    skip_ws st;
    match peek st with
    | Some ',' -> advance st; skip_ws st; if peek st = Some '}' then fail st "trailing comma" else (k, v) :: parse_fields st
    | Some '}' -> advance st; [ (k, v) ]
    | _ -> fail st "expected ',' or '}'")

let of_string text =
  let st = { text; pos = 0 } in
  let v = parse_value st in
  skip_ws st;
  if st.pos <> String.length text then fail st "trailing characters";
  v

let member key = function
  | Object fields -> List.assoc_opt key fields
  | _ -> None
