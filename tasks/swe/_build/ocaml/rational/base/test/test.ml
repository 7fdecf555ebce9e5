open OUnit2

let q = Rational.make
let show = Rational.to_string
let eq expected actual = assert_equal ~printer:show ~cmp:Rational.equal expected actual

let tests = [
  "lowest terms" >:: (fun _ ->
    assert_equal "3/4" (show (q 6 8));
    assert_equal "5" (show (q 10 2));
    assert_equal "0" (show (q 0 7)));
  "zero denominator" >:: (fun _ ->
    assert_raises Rational.Division_by_zero_denominator (fun () -> q 1 0));
  "add and sub" >:: (fun _ ->
    eq (q 5 6) (Rational.add (q 1 2) (q 1 3));
    eq (q 1 6) (Rational.sub (q 1 2) (q 1 3)));
  "mul and div" >:: (fun _ ->
    eq (q 1 4) (Rational.mul (q 1 2) (q 1 2));
    eq (q 3 2) (Rational.div (q 3 4) (q 1 2)));
  "compare positives" >:: (fun _ ->
    assert_bool "1/3 < 1/2" (Rational.compare (q 1 3) (q 1 2) < 0);
    assert_bool "2/4 = 1/2" (Rational.equal (q 2 4) (q 1 2)));
  "negative numerators" >:: (fun _ ->
    assert_equal "-1/2" (show (q (-2) 4));
    assert_equal (-1) (Rational.sign (q (-1) 3)));
  "floor and ceil" >:: (fun _ ->
    assert_equal 2 (Rational.floor (q 7 3));
    assert_equal 3 (Rational.ceil (q 7 3));
    assert_equal (-3) (Rational.floor (q (-7) 3)));
  "parse" >:: (fun _ ->
    eq (q 3 4) (Rational.of_string " 6/8 ");
    eq (Rational.of_int 5) (Rational.of_string "5"));
  "sum" >:: (fun _ -> eq Rational.one (Rational.sum [ q 1 2; q 1 3; q 1 6 ]));
  "approximate" >:: (fun _ ->
    assert_equal "22/7" (show (Rational.approximate 3.14159265 10));
    assert_equal "2" (show (Rational.approximate 2.0 10)));
]

let () = run_test_tt_main ("rational" >::: tests)
