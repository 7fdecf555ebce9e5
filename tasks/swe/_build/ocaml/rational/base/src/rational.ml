(* Exact rational numbers over native ints, always kept in lowest terms. *)

type t = { num : int; den : int }

exception Division_by_zero_denominator

let rec gcd a b = if b = 0 then abs a else gcd b (a mod b)

(* Lowest terms; the sign is carried by the numerator and the denominator stays positive. *)
let normalize num den =
  if den = 0 then raise Division_by_zero_denominator;
  let g = gcd num den in
  let g = if g = 0 then 1 else g in
  { num = num / g; den = den / g }

let make num den = normalize num den
let of_int n = { num = n; den = 1 }
let zero = of_int 0
let one = of_int 1
let num q = q.num
let den q = q.den

let add a b = normalize ((a.num * b.den) + (b.num * a.den)) (a.den * b.den)
let neg a = { a with num = -a.num }
let sub a b = add a (neg b)
let mul a b = normalize (a.num * b.num) (a.den * b.den)

let inv a =
  if a.num = 0 then raise Division_by_zero_denominator;
  normalize a.den a.num

let div a b = mul a (inv b)

let compare a b = Stdlib.compare (a.num * b.den) (b.num * a.den)
let equal a b = compare a b = 0
let sign a = Stdlib.compare a.num 0
let abs a = { a with num = Stdlib.abs a.num }
let min a b = if compare a b <= 0 then a else b
let max a b = if compare a b >= 0 then a else b

let to_float a = float_of_int a.num /. float_of_int a.den

let to_string a = if a.den = 1 then string_of_int a.num else Printf.sprintf "%d/%d" a.num a.den

let of_string s =
  match String.split_on_char '/' (String.trim s) with
  | [ n ] -> of_int (int_of_string n)
  | [ n; d ] -> make (int_of_string n) (int_of_string d)
  | _ -> invalid_arg ("Rational.of_string: " ^ s)

(* Floor and ceiling as integers. *)
let floor a = if a.num >= 0 then a.num / a.den else -((-a.num + a.den - 1) / a.den)
let ceil a = -(floor (neg a))

let sum l = List.fold_left add zero l

(* Best approximation of [x] with denominator at most [max_den] (a Stern-Brocot walk). *)
let approximate x max_den =
  if max_den < 1 then invalid_arg "Rational.approximate";
  let whole = int_of_float (Stdlib.floor x) in
  let frac = x -. float_of_int whole in
  if frac = 0. then of_int whole
  else
    let rec go (ln, ld) (hn, hd) =
      let mn = ln + hn and md = ld + hd in
      if md > max_den then
        let lo = make ln ld and hi = make hn hd in
        if Float.abs (to_float lo -. frac) <= Float.abs (to_float hi -. frac) then lo else hi
      else if float_of_int mn /. float_of_int md < frac then go (mn, md) (hn, hd)
      else go (ln, ld) (mn, md)
    in
    add (of_int whole) (go (0, 1) (1, 1))
