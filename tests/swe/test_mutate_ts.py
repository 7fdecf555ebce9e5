"""The tree-sitter mutation engine: per language, each operator's exact edit, and what it must never touch."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from environments.swe.factory import mutate_ts
from environments.swe.factory.mutate_ts import LANGUAGES, candidates, check_syntax, summary
from environments.swe.factory.mutation import OPERATORS, Mutation, apply

# Each snippet: a function with a loop, comparisons, an if/else and a guard, a call with two
# arguments, constants; the first line is a comment with non-ASCII text and operators, and the
# string "a < b" is never to be touched (but may become the empty string).
CASES: dict[str, dict] = {
    "javascript": dict(path="lib/clamp.js", function="clamp", source="""\
// héllo wörld: a < b && c in a comment
function clamp(items, limit) {
  if (!items) {
    return 0;
  }
  let total = 0;
  for (let i = 0; i < items.length; i++) {
    total += items[i] * 2;
    log("a < b", total);
  }
  if (total >= limit && limit > 1) {
    total = Math.min(total, limit - 1);
  } else {
    total = total + 3;
  }
  return total > 9 ? true : false;
}
""", expect=[
        ("flip_comparison", "i < items.length", "i >= items.length"),
        ("off_by_one", "i < items.length", "i <= items.length"),
        ("off_by_one", "Math.min(total, limit - 1)", "Math.min(total, limit)"),
        ("drop_statement", "    total += items[i] * 2;\n", ""),
        ("drop_branch", " else {\n    total = total + 3;\n  }", ""),
        ("swap_arguments", 'log("a < b", total)', 'log(total, "a < b")'),
        ("wrong_constant", "let total = 0;", "let total = 1;"),
        ("wrong_constant", "? true : false", "? false : false"),
        ("wrong_constant", 'log("a < b", total)', 'log("", total)'),
        ("invert_condition", "if (total >= limit && limit > 1)", "if (!(total >= limit && limit > 1))"),
        ("invert_condition", "if (!items)", "if (items)"),
        ("remove_early_return", "  if (!items) {\n    return 0;\n  }\n", ""),
        ("flip_boolean_operator", "total >= limit && limit > 1", "total >= limit || limit > 1"),
        ("flip_arithmetic", "items[i] * 2", "items[i] / 2"),
        ("flip_arithmetic", "Math.min(", "Math.max("),
    ]),
    "typescript": dict(path="src/score.ts", function="score", source="""\
// ünïcode ✓ comment: x > y || z
export function score(values: number[], cap: number): number {
  if (values.length === 0) {
    return -1;
  }
  let sum: number = 0;
  while (sum < cap) {
    sum = sum + values[1];
    emit("a < b", sum);
  }
  if (sum > cap || cap <= 10) {
    sum = Math.max(sum, cap);
  } else {
    sum -= 2;
  }
  const flag: boolean = true;
  return flag ? sum / 2 : 0;
}
""", expect=[
        ("flip_comparison", "values.length === 0", "values.length !== 0"),
        ("off_by_one", "cap <= 10", "cap < 10"),
        ("off_by_one", "values[1]", "values[2]"),
        ("drop_statement", '    emit("a < b", sum);\n', ""),
        ("drop_branch", " else {\n    sum -= 2;\n  }", ""),
        ("swap_arguments", "Math.max(sum, cap)", "Math.max(cap, sum)"),
        ("wrong_constant", "boolean = true", "boolean = false"),
        ("wrong_constant", "cap <= 10", "cap <= 11"),
        ("invert_condition", "while (sum < cap)", "while (!(sum < cap))"),
        ("invert_condition", "return flag ?", "return !flag ?"),
        ("remove_early_return", "  if (values.length === 0) {\n    return -1;\n  }\n", ""),
        ("flip_boolean_operator", "sum > cap || cap <= 10", "sum > cap && cap <= 10"),
        ("flip_arithmetic", "sum = sum + values[1]", "sum = sum - values[1]"),
        ("flip_arithmetic", "Math.max(", "Math.min("),
    ]),
    "go": dict(path="calc/sum.go", function="Sum", source="""\
// Sum adds 'ünï' values < limit && more
package calc

func Sum(xs []int, limit int) int {
\tif len(xs) == 0 {
\t\treturn 0
\t}
\ttotal := 0
\tfor i := 0; i < len(xs); i++ {
\t\ttotal += xs[i] * 2
\t\tfmt.Println("a < b", total)
\t}
\tif total >= limit && limit > 1 {
\t\ttotal = min(total, limit-1)
\t} else {
\t\ttotal = total + 3
\t}
\tok := true
\tif !ok {
\t\ttotal = xs[1]
\t}
\treturn total
}
""", expect=[
        ("flip_comparison", "len(xs) == 0", "len(xs) != 0"),
        ("off_by_one", "i < len(xs)", "i <= len(xs)"),
        ("off_by_one", "limit-1)", "limit)"),
        ("drop_statement", "\t\ttotal += xs[i] * 2\n", ""),
        ("drop_branch", " else {\n\t\ttotal = total + 3\n\t}", ""),
        ("drop_branch", "\tif !ok {\n\t\ttotal = xs[1]\n\t}\n", ""),
        ("swap_arguments", 'Println("a < b", total)', 'Println(total, "a < b")'),
        ("wrong_constant", "ok := true", "ok := false"),
        ("invert_condition", "if total >= limit && limit > 1 {", "if !(total >= limit && limit > 1) {"),
        ("invert_condition", "if !ok {", "if ok {"),
        ("remove_early_return", "\tif len(xs) == 0 {\n\t\treturn 0\n\t}\n", ""),
        ("flip_boolean_operator", "total >= limit && limit > 1", "total >= limit || limit > 1"),
        ("flip_arithmetic", "total + 3", "total - 3"),
        ("flip_arithmetic", "min(total", "max(total"),
    ]),
    "rust": dict(path="src/lib.rs", function="sum", source="""\
// Ünïcode ✓: a < b && c
pub fn sum(xs: &[i64], limit: i64) -> i64 {
    if xs.is_empty() {
        return 0;
    }
    let mut total = 0;
    for i in 0..xs.len() {
        total += xs[i] * 2;
        log("a < b", total);
    }
    if total >= limit && limit > 1 {
        total = std::cmp::min(total, limit - 1);
    } else {
        total = total + 3;
    }
    let ok = true;
    while total < 100 { total = total * 2; }
    if ok { total } else { xs[1] }
}
#[cfg(test)]
mod tests {
    #[test]
    fn checks() { assert!(7 < 9); }
}
""", expect=[
        ("flip_comparison", "total < 100", "total >= 100"),
        ("off_by_one", "total >= limit", "total > limit"),
        ("off_by_one", "xs[1]", "xs[2]"),
        ("drop_statement", '        log("a < b", total);\n', ""),
        ("drop_branch", " else {\n        total = total + 3;\n    }", ""),
        ("swap_arguments", "min(total, limit - 1)", "min(limit - 1, total)"),
        ("wrong_constant", "let ok = true;", "let ok = false;"),
        ("wrong_constant", "total < 100", "total < 101"),
        ("invert_condition", "if xs.is_empty() {", "if !(xs.is_empty()) {"),
        ("invert_condition", "if ok {", "if !ok {"),
        ("remove_early_return", "    if xs.is_empty() {\n        return 0;\n    }\n", ""),
        ("flip_boolean_operator", "total >= limit && limit > 1", "total >= limit || limit > 1"),
        ("flip_arithmetic", "total * 2;", "total / 2;"),
        ("flip_arithmetic", "std::cmp::min(", "std::cmp::max("),
    ]),
    "c": dict(path="src/sum.c", function="sum", source="""\
/* ünï ✓ a < b */
int sum(const int *xs, int n, int limit) {
    if (n == 0) {
        return 0;
    }
    int total = 0;
    for (int i = 0; i < n; i++) {
        total += xs[i] * 2;
        printf("a < b", total);
    }
    if (total >= limit && limit > 1) {
        total = min(total, limit - 1);
    } else {
        total = total + 3;
    }
    return total > 0 ? total : xs[1];
}
""", expect=[
        ("flip_comparison", "n == 0", "n != 0"),
        ("off_by_one", "i < n", "i <= n"),
        ("off_by_one", "xs[1]", "xs[2]"),
        ("drop_statement", "        total += xs[i] * 2;\n", ""),
        ("drop_branch", " else {\n        total = total + 3;\n    }", ""),
        ("swap_arguments", "min(total, limit - 1)", "min(limit - 1, total)"),
        ("wrong_constant", "int total = 0;", "int total = 1;"),
        ("wrong_constant", 'printf("a < b"', 'printf(""'),
        ("invert_condition", "return total > 0 ?", "return !(total > 0) ?"),
        ("remove_early_return", "    if (n == 0) {\n        return 0;\n    }\n", ""),
        ("flip_boolean_operator", "total >= limit && limit > 1", "total >= limit || limit > 1"),
        ("flip_arithmetic", "limit - 1", "limit + 1"),
        ("flip_arithmetic", "= min(", "= max("),
    ]),
    "ruby": dict(path="lib/calc.rb", function="sum", source="""\
# ünï ✓ a < b
module Calc
  def self.sum(xs, limit)
    return 0 if xs.empty?
    total = 0
    xs.each_with_index do |x, i|
      total += x * 2
      log("a < b", total)
    end
    if total >= limit && limit > 1
      total = [total, limit - 1].min
    elsif total == 7
      total = 1
    else
      total = total + 3
    end
    ok = true
    ok ? total : -1
  end
end
""", expect=[
        ("flip_comparison", "total == 7", "total != 7"),
        ("off_by_one", "limit > 1", "limit >= 1"),
        ("drop_statement", "      total += x * 2\n", ""),
        ("drop_branch", "    elsif total == 7\n      total = 1\n", ""),
        ("drop_branch", "    else\n      total = total + 3\n", ""),
        ("swap_arguments", 'log("a < b", total)', 'log(total, "a < b")'),
        ("wrong_constant", "ok = true", "ok = false"),
        ("invert_condition", "return 0 if xs.empty?", "return 0 if !(xs.empty?)"),
        ("invert_condition", "ok ? total", "!ok ? total"),
        ("remove_early_return", "    return 0 if xs.empty?\n", ""),
        ("flip_boolean_operator", "total >= limit && limit > 1", "total >= limit || limit > 1"),
        ("flip_arithmetic", "].min", "].max"),
        ("flip_arithmetic", "x * 2", "x / 2"),
    ]),
    "lua": dict(path="src/calc.lua", function="sum", source="""\
-- ünï ✓ a < b
local M = {}
function M.sum(xs, limit)
  if #xs == 0 then
    return 0
  end
  local total = 0
  for i = 1, #xs do
    total = total + xs[i] * 2
    log("a < b", total)
  end
  if total >= limit and limit > 1 then
    total = math.min(total, limit - 1)
  else
    total = total + 3
  end
  local ok = true
  while total < 100 do total = total * 2 end
  return ok and total or -1
end
return M
""", expect=[
        ("flip_comparison", "#xs == 0", "#xs ~= 0"),
        ("off_by_one", "total < 100", "total <= 100"),
        ("off_by_one", "limit - 1)", "limit)"),
        ("drop_statement", '    log("a < b", total)\n', ""),
        ("drop_branch", "  else\n    total = total + 3\n", ""),
        ("swap_arguments", "math.min(total, limit - 1)", "math.min(limit - 1, total)"),
        ("wrong_constant", "local ok = true", "local ok = false"),
        ("invert_condition", "while total < 100 do", "while not (total < 100) do"),
        ("remove_early_return", "  if #xs == 0 then\n    return 0\n  end\n", ""),
        ("flip_boolean_operator", "total >= limit and limit > 1", "total >= limit or limit > 1"),
        ("flip_boolean_operator", "ok and total or -1", "ok and total and -1"),
        ("flip_arithmetic", "math.min(", "math.max("),
    ]),
    "perl": dict(path="lib/Calc.pm", function="sum", source="""\
# ünï ✓ a < b
package Calc;
sub sum {
    my ($xs, $limit) = @_;
    if (@$xs == 0) {
        return 0;
    }
    my $total = 0;
    for (my $i = 0; $i < scalar(@$xs); $i++) {
        $total += $xs->[$i] * 2;
        log_it("a < b", $total);
    }
    if ($total >= $limit && $limit > 1) {
        $total = min($total, $limit - 1);
    } elsif ($total eq 'x') {
        $total = 4;
    } else {
        $total = $total + 3;
    }
    my $ok = 1;
    return $ok ? $total : -1;
}
1;
""", expect=[
        ("flip_comparison", "@$xs == 0", "@$xs != 0"),
        ("flip_comparison", "$total eq 'x'", "$total ne 'x'"),
        ("off_by_one", "$i < scalar", "$i <= scalar"),
        ("drop_statement", "        $total += $xs->[$i] * 2;\n", ""),
        ("drop_branch", " else {\n        $total = $total + 3;\n    }", ""),
        ("swap_arguments", "min($total, $limit - 1)", "min($limit - 1, $total)"),
        ("wrong_constant", "my $ok = 1;", "my $ok = 0;"),
        ("invert_condition", "return $ok ?", "return !$ok ?"),
        ("remove_early_return", "    if (@$xs == 0) {\n        return 0;\n    }\n", ""),
        ("flip_boolean_operator", "$total >= $limit && $limit > 1", "$total >= $limit || $limit > 1"),
        ("flip_arithmetic", "$total + 3", "$total - 3"),
        ("flip_arithmetic", "= min(", "= max("),
    ]),
    "cpp": dict(path="src/acc.cpp", function="sum", source="""\
// ünï ✓ a < b
namespace calc {
int Acc::sum(const std::vector<int>& xs, int limit) {
    if (xs.empty()) {
        return 0;
    }
    int total = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
        total += xs[i] * 2;
        log("a < b", total);
    }
    if (total >= limit && limit > 1) {
        total = std::min(total, limit - 1);
    } else if (total == 5) {
        total = 6;
    } else {
        total = total + 3;
    }
    bool ok = true;
    return ok ? total : -1;
}
}
""", expect=[
        ("flip_comparison", "i < xs.size()", "i >= xs.size()"),
        ("off_by_one", "limit > 1", "limit >= 1"),
        ("drop_statement", '        log("a < b", total);\n', ""),
        ("drop_branch", " else if (total == 5) {\n        total = 6;\n    }", ""),
        ("drop_branch", " else {\n        total = total + 3;\n    }", ""),
        ("swap_arguments", "std::min(total, limit - 1)", "std::min(limit - 1, total)"),
        ("wrong_constant", "bool ok = true;", "bool ok = false;"),
        ("invert_condition", "if (xs.empty())", "if (!(xs.empty()))"),
        ("invert_condition", "if (total == 5)", "if (!(total == 5))"),
        ("remove_early_return", "    if (xs.empty()) {\n        return 0;\n    }\n", ""),
        ("flip_boolean_operator", "total >= limit && limit > 1", "total >= limit || limit > 1"),
        ("flip_arithmetic", "std::min(", "std::max("),
        ("flip_arithmetic", "xs[i] * 2", "xs[i] / 2"),
    ]),
    "java": dict(path="src/main/java/Calc.java", function="sum", source="""\
// ünï ✓ a < b
public class Calc {
    public int sum(int[] xs, int limit) {
        if (xs.length == 0) {
            return 0;
        }
        int total = 0;
        for (int i = 0; i < xs.length; i++) {
            total += xs[i] * 2;
            log("a < b", total);
        }
        if (total >= limit && limit > 1) {
            total = Math.min(total, limit - 1);
        } else {
            total = total + 3;
        }
        boolean ok = true;
        return ok ? total : xs[1];
    }
}
""", expect=[
        ("flip_comparison", "xs.length == 0", "xs.length != 0"),
        ("off_by_one", "i < xs.length", "i <= xs.length"),
        ("off_by_one", "xs[1]", "xs[2]"),
        ("drop_statement", '            log("a < b", total);\n', ""),
        ("drop_branch", " else {\n            total = total + 3;\n        }", ""),
        ("swap_arguments", "Math.min(total, limit - 1)", "Math.min(limit - 1, total)"),
        ("wrong_constant", "boolean ok = true;", "boolean ok = false;"),
        ("invert_condition", "return ok ?", "return !ok ?"),
        ("remove_early_return", "        if (xs.length == 0) {\n            return 0;\n        }\n", ""),
        ("flip_boolean_operator", "total >= limit && limit > 1", "total >= limit || limit > 1"),
        ("flip_arithmetic", "Math.min(", "Math.max("),
        ("flip_arithmetic", "total + 3", "total - 3"),
    ]),
    "csharp": dict(path="src/Calc.cs", function="Sum", source="""\
// ünï ✓ a < b
public class Calc {
    public int Sum(int[] xs, int limit) {
        if (xs.Length == 0) {
            return 0;
        }
        int total = 0;
        for (int i = 0; i < xs.Length; i++) {
            total += xs[i] * 2;
            Log("a < b", total);
        }
        if (total >= limit && limit > 1) {
            total = Math.Min(total, limit - 1);
        } else {
            total = total + 3;
        }
        bool ok = true;
        while (!ok) { total--; }
        return ok ? total : -1;
    }
}
""", expect=[
        ("flip_comparison", "xs.Length == 0", "xs.Length != 0"),
        ("off_by_one", "i < xs.Length", "i <= xs.Length"),
        ("drop_statement", '            Log("a < b", total);\n', ""),
        ("drop_branch", " else {\n            total = total + 3;\n        }", ""),
        ("swap_arguments", "Math.Min(total, limit - 1)", "Math.Min(limit - 1, total)"),
        ("wrong_constant", "bool ok = true;", "bool ok = false;"),
        ("invert_condition", "while (!ok)", "while (ok)"),
        ("remove_early_return", "        if (xs.Length == 0) {\n            return 0;\n        }\n", ""),
        ("flip_boolean_operator", "total >= limit && limit > 1", "total >= limit || limit > 1"),
        ("flip_arithmetic", "Math.Min(", "Math.Max("),
        ("flip_arithmetic", "limit - 1)", "limit + 1)"),
    ]),
    "php": dict(path="src/sum.php", function="sum", source="""\
<?php // ünï ✓ a < b
function sum(array $xs, int $limit): int {
    if (count($xs) == 0) {
        return 0;
    }
    $total = 0;
    for ($i = 0; $i < count($xs); $i++) {
        $total += $xs[$i] * 2;
        log_it("a < b", $total);
    }
    if ($total >= $limit && $limit > 1) {
        $total = min($total, $limit - 1);
    } elseif ($total === 2) {
        $total = 5;
    } else {
        $total = $total + 3;
    }
    $ok = true;
    return $ok ? $total : -1;
}
""", expect=[
        ("flip_comparison", "$total === 2", "$total !== 2"),
        ("off_by_one", "$i < count", "$i <= count"),
        ("drop_statement", "        $total += $xs[$i] * 2;\n", ""),
        ("drop_branch", " elseif ($total === 2) {\n        $total = 5;\n    }", ""),
        ("drop_branch", " else {\n        $total = $total + 3;\n    }", ""),
        ("swap_arguments", "min($total, $limit - 1)", "min($limit - 1, $total)"),
        ("wrong_constant", "$ok = true;", "$ok = false;"),
        ("wrong_constant", "$total = 5;", "$total = 6;"),
        ("invert_condition", "return $ok ?", "return !$ok ?"),
        ("remove_early_return", "    if (count($xs) == 0) {\n        return 0;\n    }\n", ""),
        ("flip_boolean_operator", "$total >= $limit && $limit > 1", "$total >= $limit || $limit > 1"),
        ("flip_arithmetic", "= min(", "= max("),
    ]),
    "erlang": dict(path="src/calc.erl", function="sum", source="""\
%% ünï ✓ a < b
-module(calc).
-export([sum/2]).
sum([], _Limit) -> 0;
sum(Xs, Limit) ->
    Total = lists:foldl(fun(X, Acc) -> Acc + X * 2 end, 0, Xs),
    io:format("a < b", [Total]),
    if
        Total >= Limit andalso Limit > 1 -> min(Total, Limit - 1);
        Total =:= 7 -> 8;
        true -> Total + 3
    end.
""", expect=[
        ("flip_comparison", "Total >= Limit", "Total < Limit"),
        ("flip_comparison", "Total =:= 7", "Total =/= 7"),
        ("off_by_one", "Limit > 1", "Limit >= 1"),
        ("off_by_one", "Limit - 1)", "Limit)"),
        ("drop_statement", '    io:format("a < b", [Total]),\n', ""),
        ("drop_branch", "        Total =:= 7 -> 8;\n", ""),
        ("swap_arguments", "min(Total, Limit - 1)", "min(Limit - 1, Total)"),
        ("wrong_constant", "-> 8;", "-> 9;"),
        ("invert_condition", "Total =:= 7 ->", "not (Total =:= 7) ->"),
        ("remove_early_return", "sum([], _Limit) -> 0;\n", ""),
        ("flip_boolean_operator", "Limit andalso Limit", "Limit orelse Limit"),
        ("flip_arithmetic", "Acc + X * 2", "Acc - X * 2"),
        ("flip_arithmetic", "-> min(", "-> max("),
    ]),
    "elixir": dict(path="lib/calc.ex", function="sum", source="""\
# ünï ✓ a < b
defmodule Calc do
  def sum(xs, limit) do
    if xs == [] do
      0
    else
      total = Enum.reduce(xs, 0, fn x, acc -> acc + x * 2 end)
      IO.puts("a < b")
      Logger.debug("sum", total)
      if total >= limit and limit > 1 do
        min(total, limit - 1)
      else
        total + 3
      end
    end
  end
end
""", expect=[
        ("flip_comparison", "xs == []", "xs != []"),
        ("off_by_one", "limit > 1", "limit >= 1"),
        ("off_by_one", "limit - 1)", "limit)"),
        ("drop_statement", '      IO.puts("a < b")\n', ""),
        ("drop_branch", "      else\n        total + 3\n", ""),
        ("swap_arguments", "Enum.reduce(xs, 0,", "Enum.reduce(0, xs,"),
        ("wrong_constant", 'IO.puts("a < b")', 'IO.puts("")'),
        ("wrong_constant", "      0\n", "      1\n"),
        ("invert_condition", "if xs == [] do", "if !(xs == []) do"),
        ("flip_boolean_operator", "limit and limit", "limit or limit"),
        ("flip_arithmetic", "x * 2", "x / 2"),
        ("flip_arithmetic", "min(total", "max(total"),
    ]),
    "r": dict(path="R/sum.R", function="sum_cap", source="""\
# ünï ✓ a < b
sum_cap <- function(xs, limit) {
  if (length(xs) == 0) {
    return(0)
  }
  total <- 0
  for (i in seq_along(xs)) {
    total <- total + xs[i] * 2
    message("a < b", total)
  }
  if (total >= limit && limit > 1) {
    total <- min(total, limit - 1)
  } else {
    total <- total + 3
  }
  ok <- TRUE
  if (ok) total else -1
}
""", expect=[
        ("flip_comparison", "length(xs) == 0", "length(xs) != 0"),
        ("off_by_one", "limit > 1", "limit >= 1"),
        ("drop_statement", "    total <- total + xs[i] * 2\n", ""),
        ("drop_branch", " else {\n    total <- total + 3\n  }", ""),
        ("swap_arguments", "min(total, limit - 1)", "min(limit - 1, total)"),
        ("wrong_constant", "ok <- TRUE", "ok <- FALSE"),
        ("invert_condition", "if (ok)", "if (!ok)"),
        ("remove_early_return", "  if (length(xs) == 0) {\n    return(0)\n  }\n", ""),
        ("flip_boolean_operator", "limit && limit", "limit || limit"),
        ("flip_arithmetic", "total + 3", "total - 3"),
        ("flip_arithmetic", "<- min(", "<- max("),
    ]),
    "ocaml": dict(path="src/calc.ml", function="sum", source="""\
(* ünï ✓ a < b *)
let sum xs limit =
  if xs = [] then 0
  else begin
    let total = List.fold_left (fun acc x -> acc + x * 2) 0 xs in
    print_string "a < b";
    if total >= limit && limit > 1 then min total (limit - 1)
    else total + 3
  end
""", expect=[
        ("flip_comparison", "xs = []", "xs <> []"),
        ("off_by_one", "limit > 1", "limit >= 1"),
        ("off_by_one", "(limit - 1)", "(limit)"),
        ("drop_statement", '    print_string "a < b";\n', ""),
        ("drop_branch", "    else total + 3\n", ""),
        ("swap_arguments", "min total (limit - 1)", "min (limit - 1) total"),
        ("wrong_constant", "then 0", "then 1"),
        ("invert_condition", "if xs = [] then", "if not (xs = []) then"),
        ("flip_boolean_operator", "limit && limit", "limit || limit"),
        ("flip_arithmetic", "x * 2", "x / 2"),
        ("flip_arithmetic", "then min total", "then max total"),
    ]),
    "haskell": dict(path="src/Calc.hs", function="sumCap", source="""\
-- ünï ✓ a < b
module Calc where

sumCap :: [Int] -> Int -> Int
sumCap xs limit
  | null xs = 0
  | otherwise =
      let total = foldl (\\acc x -> acc + x * 2) 0 xs
      in if total >= limit && limit > 1 then min total (limit - 1) else total + 3

label :: Int -> String
label n = if n == 0 then "a < b" else show (n + 1)

report :: Int -> IO ()
report n = do
  putStrLn "report"
  print (n * 2)
""", expect=[
        ("flip_comparison", "n == 0", "n /= 0"),
        ("off_by_one", "limit > 1", "limit >= 1"),
        ("off_by_one", "(n + 1)", "(n)"),
        ("swap_arguments", "min total (limit - 1)", "min (limit - 1) total"),
        ("wrong_constant", "null xs = 0", "null xs = 1"),
        ("wrong_constant", '"a < b"', '""'),
        ("invert_condition", "| null xs =", "| not (null xs) ="),
        ("invert_condition", "if n == 0 then", "if not (n == 0) then"),
        ("remove_early_return", "  | null xs = 0\n", ""),
        ("drop_statement", '  putStrLn "report"\n', ""),
        ("flip_boolean_operator", "limit && limit", "limit || limit"),
        ("flip_arithmetic", "acc + x", "acc - x"),
        ("flip_arithmetic", "then min total", "then max total"),
    ]),
}


def _found(language: str) -> list[Mutation]:
    case = CASES[language]
    return candidates(language, case["path"], case["source"])


_cache: dict[str, list[Mutation]] = {}


def found(language: str) -> list[Mutation]:
    if language not in _cache:
        _cache[language] = _found(language)
    return _cache[language]


def _expectations():
    for language, case in CASES.items():
        for operator, before, after in case["expect"]:
            yield pytest.param(language, operator, before, after, id=f"{language}-{operator}-{before[:24].strip()}")


def test_every_language_has_a_case():
    assert sorted(CASES) == sorted(LANGUAGES)


@pytest.mark.parametrize(("language", "operator", "before", "after"), list(_expectations()))
def test_operator_makes_the_exact_edit(language, operator, before, after):
    source = CASES[language]["source"]
    assert source.count(before) == 1, f"the test's own fragment {before!r} must be unique"
    expected = source.replace(before, after)
    got = [apply(source, [m]) for m in found(language) if m.operator == operator]
    assert expected in got, f"no {operator} candidate turns {before!r} into {after!r}"


@pytest.mark.parametrize("language", sorted(CASES))
def test_every_operator_is_covered_and_every_candidate_parses(language):
    source = CASES[language]["source"]
    assert check_syntax(language, source)
    ms = found(language)
    ops = {m.operator for m in ms}
    expected_ops = {op for op, _, _ in CASES[language]["expect"]}
    assert expected_ops <= ops
    assert all(m.operator in OPERATORS for m in ms)
    for m in ms:
        assert source[m.start:m.end] == m.original
        assert m.replacement != m.original
        assert check_syntax(language, apply(source, [m])), f"{m.operator}@{m.line} {m.original!r} does not parse"
        assert m.line == source.count("\n", 0, m.start) + 1


@pytest.mark.parametrize("language", sorted(CASES))
def test_comments_and_strings_are_untouched(language):
    source = CASES[language]["source"]
    first_line_end = source.index("\n")
    for m in found(language):
        assert m.start > first_line_end, f"{m.operator} edits the comment line"
        text = apply(source, [m])
        # the string "a < b" is moved (swap_arguments) or emptied, never edited inside
        if m.operator == "wrong_constant" and m.original.strip("\"'") == "a < b":
            assert m.replacement in ('""', "''")
            assert text.count("a < b") == source.count("a < b") - 1
        elif not m.replacement and re.search(r"([\"'])a < b\1", m.original):
            assert text.count("a < b") == source.count("a < b") - 1  # a whole statement deleted
        else:
            assert text.count("a < b") == source.count("a < b"), f"{m.operator}@{m.line} edits inside a string"


@pytest.mark.parametrize("language", sorted(CASES))
def test_non_ascii_text_before_keeps_offsets(language):
    """The same source with the first line's non-ASCII letters made ASCII (same length in
    characters, fewer bytes) gives candidates at the very same character offsets."""
    source = CASES[language]["source"]
    first, rest = source.split("\n", 1)
    assert not first.isascii()
    plain = "".join(c if c.isascii() else "x" for c in first) + "\n" + rest
    assert len(plain) == len(source) and len(plain.encode()) < len(source.encode())
    wide = [(m.operator, m.start, m.end, m.replacement) for m in found(language)]
    narrow = [(m.operator, m.start, m.end, m.replacement) for m in
              candidates(language, CASES[language]["path"], plain)]
    assert wide == narrow and wide


@pytest.mark.parametrize("language", sorted(CASES))
def test_order_is_deterministic_and_function_named(language):
    ms = found(language)
    assert ms == _found(language)
    keys = [(m.start, m.operator) for m in ms]
    assert keys == sorted(keys)
    assert {m.function for m in ms} >= {CASES[language]["function"]}
    assert all(m.function for m in ms)


@pytest.mark.parametrize("language", sorted(CASES))
def test_summary_counts_per_operator(language):
    case = CASES[language]
    counts = summary(language, case["path"], case["source"])
    assert sum(counts.values()) == len(found(language))
    for op in counts:
        assert counts[op] == sum(m.operator == op for m in found(language))


def test_module_level_and_test_code_are_not_mutated():
    src = "const LIMIT = 1 + 2;\ndescribe('x', () => {\n  it('y', () => { expect(a < b).toBe(true); });\n});\n"
    assert candidates("javascript", "lib/x.js", src) == []
    go = "package p\n\nfunc TestSum(t *testing.T) {\n\tif 1 < 2 {\n\t\tt.Fatal(\"x\")\n\t}\n}\n"
    assert candidates("go", "p/sum.go", go) == []
    rust = CASES["rust"]["source"]
    assert not [m for m in found("rust") if m.start > rust.index("#[cfg(test)]")]


@pytest.mark.parametrize("path", ["pkg/sum_test.go", "test/clamp.test.js", "src/__tests__/a.ts", "spec/calc_spec.rb",
                                  "t/basic.t", "src/test/java/CalcTest.java", "tests/integration.rs"])
def test_test_files_are_skipped(path):
    assert mutate_ts.is_test_path(path)
    assert candidates("javascript", path, CASES["javascript"]["source"]) == []


def test_source_paths_are_not_taken_for_tests():
    for path in ["lib/clamp.js", "src/contest.c", "pkg/attest/x.go", "src/main/java/Calc.java", "lib/latest.rb"]:
        assert not mutate_ts.is_test_path(path)


def test_check_syntax_rejects_broken_code():
    assert check_syntax("go", "package p\nfunc f() int { return 1 }\n")
    assert not check_syntax("go", "package p\nfunc f() int { return 1 +  }\n")
    assert not check_syntax("rust", "fn f() { let x = ; }")
    assert not check_syntax("javascript", "function f( { }")  # a MISSING or ERROR node


def test_unknown_language_is_a_clear_error():
    with pytest.raises(ValueError, match="mutate_ts handles"):
        candidates("cobol", "x.cob", "")
    with pytest.raises(ValueError, match="mutate_ts handles"):
        check_syntax("python", "x = 1")


def test_a_file_with_a_parse_error_elsewhere_still_yields_clean_mutants():
    broken = CASES["c"]["source"] + "int broken( {\n"
    ms = candidates("c", "src/sum.c", broken)
    assert ms
    base = mutate_ts._errors(mutate_ts._parser("c").parse(broken.encode()).root_node)
    for m in ms:
        tree = mutate_ts._parser("c").parse(apply(broken, [m]).encode())
        assert mutate_ts._errors(tree.root_node) <= base


def test_a_file_whose_root_the_grammar_cannot_parse_still_yields_its_clean_functions():
    """YAML::Tiny's root parses as one ERROR node (its earlier errors leave its POD read as code,
    as prose after a sub is here): the functions in it are mutated still."""
    broken = CASES["perl"]["source"] + ("Support for plain-style mapping keys is required.\n"
                                        "Support for quoted keys in mappings is B<not> required.\n")
    root = mutate_ts._parser("perl").parse(broken.encode()).root_node
    assert root.type == "ERROR"
    ms = candidates("perl", "lib/Calc.pm", broken)
    assert {m.function for m in ms} >= {"sum"}
    base = mutate_ts._errors(root)
    for m in ms:
        assert mutate_ts._errors(mutate_ts._parser("perl").parse(apply(broken, [m]).encode()).root_node) <= base


def test_big_file_is_fast():
    """A 3,000-line file: candidates in about a second even on a busy machine (CPU time)."""
    base = CASES["javascript"]["source"]
    copies = 3000 // base.count("\n") + 1
    big = "".join(base.replace("clamp", f"clamp{i}") for i in range(copies))
    assert big.count("\n") >= 3000
    start = time.process_time()
    ms = candidates("javascript", "lib/big.js", big)
    took = time.process_time() - start
    assert len(ms) == copies * len(found("javascript"))
    assert took < 2.0, f"{took:.2f}s CPU for {big.count(chr(10))} lines"


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare")
def test_grammars_load_without_network(tmp_path):
    """Every grammar is inside an installed wheel: loading all of them with no network works."""
    code = ("from environments.swe.factory.mutate_ts import LANGUAGES, check_syntax\n"
            "print(sum(check_syntax(l, '') for l in LANGUAGES))\n")
    probe = subprocess.run(["unshare", "-rn", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("unshare -rn not permitted here")
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    run = subprocess.run(["unshare", "-rn", sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, cwd=os.getcwd(), timeout=120)
    assert run.returncode == 0, run.stderr
    assert int(run.stdout.strip()) == len(LANGUAGES)


def _checker(language: str, source: str):
    parser = mutate_ts._parser(language)
    tree = parser.parse(source.encode())
    src = mutate_ts._Text(source)
    finder = mutate_ts._Finder(mutate_ts._spec(language), src, "x")
    finder.visit(tree.root_node, "")
    return finder, mutate_ts._Checker(mutate_ts._spec(language), parser, tree, src)


def _broken(m: Mutation) -> Mutation:
    return Mutation(m.path, m.operator, m.line, m.start, m.end, "<(", m.function, m.original)


@pytest.mark.parametrize("language", ["javascript", "java", "ocaml", "erlang", "php"])
def test_a_mutant_that_breaks_the_syntax_is_refused(language):
    """The cheap checks (the function alone, in its wrapper; the whole file re-parsed
    incrementally) refuse a broken edit and pass a sound one."""
    source = CASES[language]["source"]
    finder, checker = _checker(language, source)
    m, scope = next((m, s) for m, s in zip(finder.out, finder.scopes, strict=True) if m.operator == "flip_comparison")
    for where in (scope, (0, len(source))):
        assert checker.ok(m, where)
        assert not checker.ok(_broken(m), where)


def test_a_big_function_is_checked_incrementally_and_right():
    """A function over 4,000 characters is re-parsed incrementally from its own tree."""
    body = "".join(f"  total += xs[{i}] * 2;\n" for i in range(250))
    fn = ("function big{n}(xs) {{\n  let total = 0;\n" + body
          + "  if (total < 3) {{\n    return 1;\n  }}\n  return total;\n}}\n")
    source = fn.format(n=1) + fn.format(n=2) + fn.format(n=3)
    finder, checker = _checker("javascript", source)
    m, scope = next((m, s) for m, s in zip(finder.out, finder.scopes, strict=True) if m.operator == "flip_comparison")
    assert scope[1] - scope[0] > 4000 and scope[1] - scope[0] < len(source) // 2
    assert checker.ok(m, scope) and not checker.ok(_broken(m), scope)
    assert scope in checker._chunks  # the incremental path was the one taken
    ms = candidates("javascript", "lib/big.js", source)
    assert len(ms) > 1500
    for m in ms[::97]:
        assert check_syntax("javascript", apply(source, [m]))


def test_minified_files_are_skipped():
    line = "function f(a,b){if(a<b){return a+1}return b-1};" * 200
    assert candidates("javascript", "dist/lib.min.js", line + "\n") == []
    assert candidates("javascript", "lib/f.js", line.replace(";", ";\n"))


def test_deep_nesting_does_not_overflow():
    """A 600-branch else-if chain nests deeper (1,200 levels) than Python's recursion limit."""
    chain = "".join(f" else if (x == {i}) {{\n    y = {i};\n  }}" for i in range(600))
    source = "int f(int x) {\n  int y = 0;\n  if (x < 0) {\n    y = 1;\n  }" + chain + "\n  return y;\n}\n"
    ms = candidates("c", "src/deep.c", source)
    assert sum(m.operator == "flip_comparison" for m in ms) == 601


@pytest.mark.parametrize(("language", "source", "names"), [
    ("javascript", "const add = (a, b) => {\n  log(a, b);\n  return a + b;\n};\n", {"add"}),
    ("javascript", "class K {\n  run(a, b) { return a < b; }\n}\n", {"run"}),
    ("lua", "local M = {}\nM.add = function(a, b)\n  log(a, b)\n  return a + b\nend\nreturn M\n", {"add"}),
    ("r", "add <- function(a, b) {\n  a + b\n}\n", {"add"}),
    ("elixir", "defmodule M do\n  defp add(a, b) when a > 0 do\n    a + b\n  end\nend\n", {"add"}),
    ("go", "package p\n\nfunc (s *S) Add(a, b int) int {\n\treturn a + b\n}\n", {"Add"}),
    ("cpp", "int Acc::add(int a, int b) {\n    return a + b;\n}\n", {"add"}),
    ("java", "class K {\n  K(int a) { this.a = a + 1; }\n}\n", {"K"}),
    ("rust", "impl S {\n    fn add(&self, a: i32) -> i32 { a + 1 }\n}\n", {"add"}),
    ("ocaml", "let add a b =\n  let c = a + b in\n  c * 2\n", {"add"}),
    ("erlang", "-module(m).\nadd(A, B) -> A + B.\n", {"add"}),
    ("haskell", "add :: Int -> Int -> Int\nadd a b = a + b\n", {"add"}),
])
def test_function_is_the_enclosing_definition(language, source, names):
    ms = candidates(language, "src/x", source)
    assert ms and {m.function for m in ms} == names


# A string whose content reads like code (`true`, `7`, `a < b`), in each language's call syntax.
TRICKY_STRINGS = {
    "javascript": 'function f(x) {\n  return g("true", "7", `a < ${x}`);\n}\n',
    "typescript": 'function f(x: number): string {\n  return g("true", "7", "a < b");\n}\n',
    "go": 'package p\n\nfunc f(x int) string {\n\treturn g("true", "7", `a < b`)\n}\n',
    "rust": 'fn f(x: i32) -> String {\n    g("true", "7", r"a < b")\n}\n',
    "c": 'char *f(int x) {\n    return g("true", "7", \'<\');\n}\n',
    "cpp": 'std::string f(int x) {\n    return g("true", "7", R"(a < b)");\n}\n',
    "java": 'class K {\n  String f(int x) { return g("true", "7", \'<\'); }\n}\n',
    "csharp": 'class K {\n  string F(int x) { return G("true", "7", @"a < b"); }\n}\n',
    "php": '<?php\nfunction f($x) {\n    return g("true", \'7\', "a < $x");\n}\n',
    "ruby": 'def f(x)\n  g("true", \'7\', "a < #{x}")\nend\n',
    "perl": 'sub f {\n    return g("true", \'7\', "a < $x");\n}\n',
    "lua": 'function f(x)\n  return g("true", \'7\', [[a < b]])\nend\n',
    "erlang": '-module(m).\nf(X) -> g("true", "7", \'a < b\').\n',
    "elixir": 'defmodule M do\n  def f(x) do\n    g("true", "7", "a < #{x}")\n  end\nend\n',
    "r": 'f <- function(x) {\n  g("true", "7", \'a < b\')\n}\n',
    "ocaml": 'let f x =\n  g "true" "7" {|a < b|}\n',
    "haskell": 'f :: Int -> String\nf x = g "true" "7" "a < b"\n',
}


@pytest.mark.parametrize("language", sorted(TRICKY_STRINGS))
def test_strings_that_read_like_code_are_only_emptied_or_moved(language):
    source = TRICKY_STRINGS[language]
    assert check_syntax(language, source)
    literals = [(m.start(), m.end()) for m in re.finditer(r'"true"|"7"|\'7\'', source)]
    ms = candidates(language, "src/x", source)
    assert ms
    for m in ms:
        for a, b in literals:
            if m.start < b and a < m.end:  # touches the literal
                inside = a <= m.start and m.end <= b
                assert (inside and m.operator == "wrong_constant" and m.replacement in ('""', "''")
                        and (m.start, m.end) == (a, b)) or (m.operator == "swap_arguments" and m.start <= a
                                                            and b <= m.end), f"{m.operator} edits {m.original!r}"
    # the third literal (a string, raw string, char or template holding `<`) is never edited inside
    for m in ms:
        if "<" in m.original:
            assert m.operator == "swap_arguments" or (m.operator == "wrong_constant" and m.replacement in ('""', "''"))


# A switch/case/match: one branch (not a catch-all `_`) is dropped whole.
SWITCHES = {
    'javascript': (
        'function f(x){\n'
        '  switch (x) {\n'
        '    case 1:\n'
        '      a();\n'
        '      break;\n'
        '    default:\n'
        '      b();\n'
        '  }\n'
        '}\n',
        '    case 1:\n      a();\n      break;\n'),
    'c': (
        'int f(int x){\n'
        '  switch (x) {\n'
        '    case 1:\n'
        '      a();\n'
        '      break;\n'
        '    default:\n'
        '      b();\n'
        '  }\n'
        '}\n',
        '    case 1:\n      a();\n      break;\n'),
    'java': (
        'class K { int f(int x){\n'
        '  switch (x) {\n'
        '    case 1:\n'
        '      a();\n'
        '      break;\n'
        '    default:\n'
        '      b();\n'
        '  }\n'
        '}}\n',
        '    case 1:\n      a();\n      break;\n'),
    'csharp': (
        'class K { int f(int x){\n'
        '  switch (x) {\n'
        '    case 1:\n'
        '      a();\n'
        '      break;\n'
        '    default:\n'
        '      b();\n'
        '      break;\n'
        '  }\n'
        '}}\n',
        '    case 1:\n      a();\n      break;\n'),
    'php': (
        '<?php function f($x){\n'
        '  switch ($x) {\n'
        '    case 1:\n'
        '      a();\n'
        '      break;\n'
        '    default:\n'
        '      b();\n'
        '  }\n'
        '}\n',
        '    case 1:\n      a();\n      break;\n'),
    'go': (
        'package p\n'
        'func f(x int) {\n'
        '\tswitch x {\n'
        '\tcase 1:\n'
        '\t\ta()\n'
        '\tdefault:\n'
        '\t\tb()\n'
        '\t}\n'
        '}\n',
        '\tcase 1:\n\t\ta()\n'),
    'ruby': (
        'def f(x)\n'
        '  case x\n'
        '  when 1\n'
        '    a\n'
        '  else\n'
        '    b\n'
        '  end\n'
        'end\n',
        '  when 1\n    a\n'),
    'elixir': (
        'defmodule M do\n'
        '  def f(x) do\n'
        '    case x do\n'
        '      1 -> a()\n'
        '      _ -> b()\n'
        '    end\n'
        '  end\n'
        'end\n',
        '      1 -> a()\n'),
    'ocaml': (
        'let f x =\n'
        '  match x with\n'
        '  | 1 -> a ()\n'
        '  | _ -> b ()\n',
        '  | 1 -> a ()\n'),
    'haskell': (
        'f x = case x of\n'
        '  1 -> a\n'
        '  _ -> b\n',
        '  1 -> a\n'),
    'rust': (
        'fn f(x: i32) {\n'
        '    match x {\n'
        '        1 => a(),\n'
        '        _ => b(),\n'
        '    }\n'
        '}\n',
        '        1 => a(),\n'),
}


@pytest.mark.parametrize("language", sorted(SWITCHES))
def test_drop_branch_drops_one_case_of_a_switch(language):
    source, branch = SWITCHES[language]
    assert source.count(branch) == 1
    got = [apply(source, [m]) for m in candidates(language, "src/x", source) if m.operator == "drop_branch"]
    assert source.replace(branch, "") in got
    assert all(check_syntax(language, text) for text in got)
    # the catch-all `_` of a pattern match stays (the last clause)
    dropped = [m.original for m in candidates(language, "src/x", source) if m.operator == "drop_branch"]
    assert not any(re.search(r"\b_ *(->|=>)", text) for text in dropped)


def test_tsx_files_parse_with_jsx():
    source = ("export function Row(props: { n: number }) {\n  if (props.n > 1) {\n    return <b>{props.n}</b>;\n  }\n"
              "  return <i>none</i>;\n}\n")
    assert not check_syntax("typescript", source)
    assert check_syntax("typescript", source, "src/Row.tsx")
    ms = candidates("typescript", "src/Row.tsx", source)
    assert "flip_comparison" in {m.operator for m in ms}
    assert all(check_syntax("typescript", apply(source, [m]), "src/Row.tsx") for m in ms)


@pytest.mark.parametrize("language", ["lua", "r", "ruby", "perl"])
def test_a_bindings_c_files_are_parsed_as_c(language):
    """lua-cjson's source is C (lua_cjson.c): its Lua package found no candidate at all when the
    file was parsed with Lua's grammar; a C file is parsed as C in any package."""
    case = CASES["c"]
    expected = [(m.operator, m.start, m.end, m.replacement) for m in candidates("c", case["path"], case["source"])]
    got = [(m.operator, m.start, m.end, m.replacement) for m in candidates(language, case["path"], case["source"])]
    assert got == expected and got
    assert candidates(language, "src/sum.h", case["source"]) != []
    assert mutate_ts.file_language(language, "lua/cjson/util.lua") == language
    assert mutate_ts.file_language(language, "src.d/readme") == language
    assert mutate_ts.file_language("cpp", "include/x.h") == "cpp"
    assert mutate_ts.file_language(language, "src/x.cpp") == "cpp"
