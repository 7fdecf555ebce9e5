open OUnit2
open Minijson

let roundtrip v = of_string (to_string v)
let check_print expected v = assert_equal ~printer:String.escaped expected (to_string v)

let parse_fails text =
  match of_string text with
  | exception Parse_error _ -> ()
  | _ -> assert_failure ("accepted invalid JSON: " ^ text)

let tests = [
  "print scalars" >:: (fun _ ->
    check_print "null" Null;
    check_print "true" (Bool true);
    check_print "42" (Number 42.);
    check_print "-0.5" (Number (-0.5)));
  "print containers" >:: (fun _ ->
    check_print {|{"a":[1,2],"b":{}}|} (Object [ ("a", Array [ Number 1.; Number 2. ]); ("b", Object []) ]));
  "print escapes quotes, backslashes, newlines" >:: (fun _ ->
    check_print {|"say \"hi\"\\n\n"|} (String "say \"hi\"\\n\n"));
  "parse nested" >:: (fun _ ->
    assert_equal (Object [ ("x", Array [ Null; Bool false; String "s" ]) ]) (of_string {| { "x" : [null, false, "s"] } |}));
  "parse numbers" >:: (fun _ ->
    assert_equal (Array [ Number 1.5; Number (-2e3) ]) (of_string "[1.5,-2e3]"));
  "parse escapes" >:: (fun _ ->
    assert_equal (String "a\"b\\c/\n\t\xc3\xa9") (of_string {|"a\"b\\c\/\n\t\u00e9"|}));
  "reject trailing commas" >:: (fun _ -> parse_fails "[1,]"; parse_fails {|{"a":1,}|});
  "reject bad literals and numbers" >:: (fun _ -> parse_fails "nul"; parse_fails "+1"; parse_fails ".5");
  "reject raw control characters" >:: (fun _ -> parse_fails "\"a\001b\"");
  "reject trailing characters" >:: (fun _ -> parse_fails "1 2");
  "member" >:: (fun _ ->
    assert_equal (Some (Number 1.)) (member "a" (of_string {|{"a":1}|}));
    assert_equal None (member "z" (of_string {|{"a":1}|})));
  "roundtrip plain text" >:: (fun _ ->
    let v = Object [ ("name", String "Zoë \"Z\" O'Neil"); ("tags", Array [ String "a\tb" ]) ] in
    assert_equal v (roundtrip v));
]

let () = run_test_tt_main ("minijson" >::: tests)
