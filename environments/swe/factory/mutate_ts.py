"""Candidate bugs in non-Python source, from its tree-sitter parse (the operators of `mutation.OPERATORS`).

One engine, many grammars: each language is a `_Spec` naming which node types mean a function,
a block of statements, an `if`, a call, a literal... and the walk in `_Finder` is shared. The
grammars come compiled in the `tree-sitter-language-pack` wheel (0.x: every grammar is inside the
wheel, nothing is fetched at run time; 1.x downloads them, so it is pinned below that).

Rules, as in `mutate_py`: only code inside functions is mutated, never comments or string
literals (but a short string may become ""), never obvious test code (test files, test
functions, `mod tests`, describe/it blocks) nor minified files; no-ops are dropped. Every
candidate still parses: `_Checker` re-parses the mutated function alone when it parses alone (in
a wrapper such as `class _ {...}` for a method; incrementally when it is big), else the whole
file incrementally, and a file that already had parse errors may not get more. Offsets are str
offsets: tree-sitter's byte offsets are converted through `_Text`.

Where a language has no such construct an operator is absent: no `return` in Elixir, OCaml or
Haskell (but a function's first clauses, Erlang's and Haskell's guards, count as early returns),
no optional `else` in Haskell, no booleans in Perl.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache

from tree_sitter import Node, Parser, Point, Tree

from environments.swe.factory.mutation import Mutation, per_operator

# -- operator tables (token text -> replacement), shared by most grammars ---------------------
_FLIP = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "==", "===": "!==", "!==": "==="}
_OFF_BY_ONE = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}
_BOOL = {"&&": "||", "||": "&&", "and": "or", "or": "and"}
_ARITH = {"+": "-", "-": "+", "*": "/", "/": "*"}
# expression kinds a dropped statement may be (calls, assignments, updates; not declarations)
_DROPPABLE = ("call", "invocation", "application", "apply", "assignment", "update", "inc_", "dec_", "await", "yield",
              "augmented")
_ELIXIR_FORMS = frozenset({"if", "unless", "case", "cond", "with", "for", "def", "defp", "defmacro", "defmacrop",
                           "try", "receive", "quote"})
_INDEXING = ("index", "subscript", "array_access", "element_access", "bracketed_argument")
_MINMAX = {"min": "max", "max": "min", "Min": "Max", "Max": "Min"}

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_?!']*")
_DIGITS = re.compile(r"[0-9]+")
_TEST_NAME = re.compile(r"^(test|Test|Benchmark|Fuzz|Example)([A-Z_0-9]|$)|^test_|_tests?$"
                        r"|^(setUp|tearDown|setUpClass|tearDownClass|setUpAll|tearDownAll)$")
_TEST_CALLS = frozenset({"describe", "it", "test", "context", "beforeEach", "afterEach", "beforeAll",
                         "afterAll", "before", "after", "suite", "setup", "teardown", "specify"})
_TEST_PATH = re.compile(
    r"(^|/)(tests?|__tests__|spec|specs|testing|testdata|t)/|(^|/)test_[^/]*$|_test\.[^/]+$"
    r"|[._-](test|spec)\.[^/]+$|(^|/)[^/]*Tests?\.(java|cs|kt|php)$|_spec\.rb$|_SUITE\.erl$|\.t$")


@dataclass(frozen=True)
class _Spec:
    """What the node types of one grammar mean. Sets hold node types; tables map token text."""

    grammar: str
    functions: frozenset[str]          # function/method definitions (named or not)
    blocks: frozenset[str]             # nodes whose named children are statements
    statements: frozenset[str]         # statements drop_statement may delete (if `droppable`)
    ifs: frozenset[str]                # if statements/expressions (condition + branches)
    loops: frozenset[str] = frozenset()     # while/until loops with a `condition`
    ternaries: frozenset[str] = frozenset()
    returns: frozenset[str] = frozenset()   # return/throw/raise statements
    binaries: frozenset[str] = frozenset({"binary_expression"})
    calls: frozenset[str] = frozenset({"call_expression"})
    integers: frozenset[str] = frozenset()
    booleans: dict[str, str] = field(default_factory=lambda: {"true": "false", "false": "true"})
    strings: frozenset[str] = frozenset()   # string literals (short ones may become "")
    skip: frozenset[str] = frozenset()      # never looked into (types, attributes, regexes...)
    compare: dict[str, str] = field(default_factory=lambda: _FLIP)
    off_by_one: dict[str, str] = field(default_factory=lambda: _OFF_BY_ONE)
    boolean_ops: dict[str, str] = field(default_factory=lambda: _BOOL)
    arith: dict[str, str] = field(default_factory=lambda: _ARITH)
    negate: str = "!({})"              # how a condition is inverted
    not_prefixes: tuple[str, ...] = ("!",)   # an already-negated condition loses this instead
    expression_wrappers: frozenset[str] = frozenset({"expression_statement"})
    call_names: tuple[str, ...] = ("function", "method", "name", "macro")  # fields naming the callee
    argument_lists: frozenset[str] = frozenset({"arguments", "argument_list"})
    else_types: frozenset[str] = frozenset({"else_clause"})
    # text around a function that makes it parse alone (tried in order): `class _ {...}` for a method
    wraps: tuple[tuple[str, str], ...] = (("", ""),)
    declarations: frozenset[str] = frozenset()   # `left` of an assignment that declares (never dropped)
    return_calls: tuple[str, ...] = ()      # calls that leave the function like a return (raise, die)
    # `_name(node)` for a function node; None = the generic rule (its `name` field, else anonymous)
    namer: Callable[[Node, bytes], str | None] | None = None
    is_function: Callable[[Node, bytes], bool] | None = None  # narrows `functions` (Elixir's `def` calls)
    outer_names: bool = False                # nested definitions keep the outer function's name
    condition_fields: tuple[str, ...] = ("condition",)
    condition_wrappers: frozenset[str] = frozenset({"condition_clause"})  # unwrapped around a condition
    call_ifs: tuple[str, ...] = ()           # calls that are an `if` (Elixir's `if c do ... else ... end`)
    # container -> (clause kind, operator, whether its last clause stays: a catch-all `_ ->`)
    clauses: dict[str, tuple[str, str, bool]] = field(default_factory=dict)
    assign_ops: frozenset[str] = frozenset()  # binary operators that assign (R's `<-`): droppable
    curried: bool = False                    # calls are `f a b` (OCaml, Haskell)
    consequence_fields: tuple[str, ...] = ("consequence", "body", "block")
    keep_last: bool = False                  # a block's last statement is its value: never dropped


def _field_text(node: Node | None, data: bytes) -> str:
    if node is None:
        return ""
    found = _IDENT.findall(data[node.start_byte:node.end_byte].decode("utf-8", "replace"))
    return found[-1] if found else ""


def _c_name(node: Node, data: bytes) -> str | None:
    """C/C++: the identifier inside the (possibly nested) function_declarator."""
    d = node.child_by_field_name("declarator")
    while d is not None and d.type != "function_declarator":
        d = d.child_by_field_name("declarator")
    if d is not None and (name := _field_text(d.child_by_field_name("declarator"), data)):
        return name
    # a macro in the head (`int EXPORT main(void)`) hides the declarator: the name before `(`
    body = node.child_by_field_name("body")
    head = data[node.start_byte:body.start_byte if body is not None else node.end_byte].decode("utf-8", "replace")
    found = re.findall(r"([A-Za-z_]\w*)\s*\(", head)
    return found[0] if found else None


def _elixir_name(node: Node, data: bytes) -> str | None:
    """`def name(args) do`, `def name(args) when guard do`: the name of the defined function."""
    if node.type != "call":
        return None
    args = next((c for c in node.named_children if c.type == "arguments"), None)
    head = _named(args)[0] if args is not None and _named(args) else None
    if head is not None and head.type == "binary_operator":  # a `when` guard
        head = head.child_by_field_name("left")
    if head is not None and head.type == "call":
        head = head.child_by_field_name("target")
    return _field_text(head, data) or None


def _r_name(node: Node, data: bytes) -> str | None:
    """R: `name <- function(...)`; a function without one is anonymous (its `name` is `function`)."""
    parent = node.parent
    if parent is not None and parent.type == "binary_operator":
        return _field_text(parent.child_by_field_name("lhs"), data) or "<anonymous>"
    return "<anonymous>"


_C_STRINGS = frozenset({"string_literal", "char_literal", "concatenated_string", "raw_string_literal",
                        "system_lib_string"})

_JS = dict(
    functions=frozenset({"function_declaration", "generator_function_declaration", "method_definition",
                         "function_expression", "arrow_function", "function", "generator_function"}),
    blocks=frozenset({"statement_block", "switch_case", "switch_default"}),
    statements=frozenset({"expression_statement"}),
    ifs=frozenset({"if_statement"}),
    loops=frozenset({"while_statement", "do_statement"}),
    ternaries=frozenset({"ternary_expression"}),
    returns=frozenset({"return_statement", "throw_statement"}),
    integers=frozenset({"number"}),
    strings=frozenset({"string", "template_string"}),
    skip=frozenset({"regex", "decorator", "type_annotation", "type_arguments", "type_parameters",
                    "type_alias_declaration", "interface_declaration", "predefined_type", "jsx_text"}),
    argument_lists=frozenset({"arguments"}),
    wraps=(("", ""), ("class _ {\n", "\n}")),
    clauses={"switch_body": ("switch_case", "drop_branch", False)},
)

_C_LIKE = dict(
    blocks=frozenset({"compound_statement", "case_statement"}),
    statements=frozenset({"expression_statement"}),
    ifs=frozenset({"if_statement"}),
    loops=frozenset({"while_statement", "do_statement"}),
    ternaries=frozenset({"conditional_expression"}),
    returns=frozenset({"return_statement", "throw_statement", "goto_statement"}),
    integers=frozenset({"number_literal"}),
    strings=_C_STRINGS,
    namer=_c_name,
    wraps=(("", ""), ("class _ {\n", "\n};")),
    clauses={"compound_statement": ("case_statement", "drop_branch", False)},
)

_SPECS: dict[str, _Spec] = {
    "javascript": _Spec(grammar="javascript", **_JS),
    "typescript": _Spec(grammar="typescript", **_JS),
    "go": _Spec(
        grammar="go",
        functions=frozenset({"function_declaration", "method_declaration", "func_literal"}),
        blocks=frozenset({"statement_list"}),
        statements=frozenset({"expression_statement", "assignment_statement", "inc_statement", "dec_statement"}),
        ifs=frozenset({"if_statement"}),
        returns=frozenset({"return_statement"}),
        integers=frozenset({"int_literal"}),
        strings=frozenset({"interpreted_string_literal", "raw_string_literal"}),
        skip=frozenset({"rune_literal", "type_arguments", "type_parameter_list"}),
        else_types=frozenset(),
        return_calls=("panic", "log.Fatal", "log.Fatalf"),
        clauses={"expression_switch_statement": ("expression_case", "drop_branch", False),
                 "type_switch_statement": ("type_case", "drop_branch", False)},
    ),
    "rust": _Spec(
        grammar="rust",
        functions=frozenset({"function_item", "closure_expression"}),
        blocks=frozenset({"block"}),
        statements=frozenset({"expression_statement"}),
        ifs=frozenset({"if_expression"}),
        loops=frozenset({"while_expression"}),
        returns=frozenset({"return_expression"}),
        integers=frozenset({"integer_literal"}),
        strings=frozenset({"string_literal", "raw_string_literal"}),
        skip=frozenset({"attribute_item", "inner_attribute_item", "char_literal", "type_arguments",
                        "type_parameters", "macro_definition"}),
        return_calls=("panic", "unreachable", "bail"),
        clauses={"match_block": ("match_arm", "drop_branch", True)},
        wraps=(("", ""), ("impl _ {\n", "\n}")),
    ),
    "c": _Spec(grammar="c", functions=frozenset({"function_definition"}),
               skip=frozenset({"preproc_include", "preproc_def", "preproc_function_def", "preproc_call",
                               "attribute_specifier", "type_descriptor", "sizeof_expression"}),
               **_C_LIKE),
    "cpp": _Spec(grammar="cpp", functions=frozenset({"function_definition", "lambda_expression"}),
                 skip=frozenset({"preproc_include", "preproc_def", "preproc_function_def", "preproc_call",
                                 "attribute_specifier", "attribute_declaration", "type_descriptor",
                                 "template_argument_list", "template_parameter_list", "sizeof_expression"}),
                 **_C_LIKE),
    "java": _Spec(
        grammar="java",
        functions=frozenset({"method_declaration", "constructor_declaration", "lambda_expression",
                             "compact_constructor_declaration"}),
        blocks=frozenset({"block", "switch_block_statement_group"}),
        statements=frozenset({"expression_statement"}),
        ifs=frozenset({"if_statement"}),
        loops=frozenset({"while_statement", "do_statement"}),
        ternaries=frozenset({"ternary_expression"}),
        returns=frozenset({"return_statement", "throw_statement"}),
        calls=frozenset({"method_invocation"}),
        integers=frozenset({"decimal_integer_literal"}),
        strings=frozenset({"string_literal", "text_block"}),
        skip=frozenset({"character_literal", "annotation", "marker_annotation", "type_arguments",
                        "type_parameters"}),
        wraps=(("class _ {\n", "\n}"), ("", "")),
        clauses={"switch_block": ("switch_block_statement_group", "drop_branch", False)},
    ),
    "csharp": _Spec(
        grammar="csharp",
        functions=frozenset({"method_declaration", "constructor_declaration", "local_function_statement",
                             "lambda_expression", "operator_declaration", "accessor_declaration"}),
        blocks=frozenset({"block", "switch_section"}),
        statements=frozenset({"expression_statement"}),
        ifs=frozenset({"if_statement"}),
        loops=frozenset({"while_statement", "do_statement"}),
        ternaries=frozenset({"conditional_expression"}),
        returns=frozenset({"return_statement", "throw_statement", "throw_expression"}),
        calls=frozenset({"invocation_expression"}),
        integers=frozenset({"integer_literal"}),
        strings=frozenset({"string_literal", "verbatim_string_literal", "raw_string_literal",
                           "interpolated_string_expression"}),
        skip=frozenset({"character_literal", "attribute_list", "type_argument_list", "type_parameter_list"}),
        call_names=("function",),
        wraps=(("class _ {\n", "\n}"), ("", "")),
        clauses={"switch_body": ("switch_section", "drop_branch", False)},
    ),
    "php": _Spec(
        grammar="php",
        functions=frozenset({"function_definition", "method_declaration", "anonymous_function",
                             "arrow_function", "anonymous_function_creation_expression"}),
        blocks=frozenset({"compound_statement", "case_statement", "default_statement"}),
        statements=frozenset({"expression_statement"}),
        ifs=frozenset({"if_statement"}),
        loops=frozenset({"while_statement", "do_statement"}),
        ternaries=frozenset({"conditional_expression"}),
        returns=frozenset({"return_statement", "throw_expression"}),
        calls=frozenset({"function_call_expression", "member_call_expression", "scoped_call_expression",
                         "nullsafe_member_call_expression"}),
        integers=frozenset({"integer"}),
        booleans={"true": "false", "false": "true", "TRUE": "FALSE", "FALSE": "TRUE"},
        strings=frozenset({"string", "encapsed_string", "heredoc", "nowdoc"}),
        skip=frozenset({"attribute_list", "text", "php_tag"}),
        wraps=(("<?php\n", ""), ("<?php class _ {\n", "\n}")),
        clauses={"switch_block": ("case_statement", "drop_branch", False)},
        else_types=frozenset({"else_clause", "else_if_clause"}),
    ),
    "ruby": _Spec(
        grammar="ruby",
        functions=frozenset({"method", "singleton_method", "lambda"}),
        blocks=frozenset({"body_statement", "then", "else", "block_body", "begin"}),
        statements=frozenset({"assignment", "operator_assignment", "call"}),
        ifs=frozenset({"if", "unless", "elsif", "if_modifier", "unless_modifier"}),
        loops=frozenset({"while", "until", "while_modifier", "until_modifier"}),
        ternaries=frozenset({"conditional"}),
        returns=frozenset({"return", "next", "break"}),
        binaries=frozenset({"binary"}),
        calls=frozenset({"call"}),
        integers=frozenset({"integer"}),
        strings=frozenset({"string", "heredoc_body", "heredoc_beginning", "subshell", "character"}),
        skip=frozenset({"regex", "simple_symbol", "delimited_symbol", "string_array", "symbol_array"}),
        not_prefixes=("!", "not "),
        else_types=frozenset({"else", "elsif"}),
        expression_wrappers=frozenset(),
        return_calls=("raise", "fail", "throw"),
        clauses={"case": ("when", "drop_branch", False)},
    ),
    "perl": _Spec(
        grammar="perl",
        functions=frozenset({"subroutine_declaration_statement", "method_declaration_statement",
                             "anonymous_subroutine_expression"}),
        blocks=frozenset({"block"}),
        statements=frozenset({"expression_statement"}),
        ifs=frozenset({"conditional_statement", "elsif"}),
        loops=frozenset({"loop_statement"}),
        ternaries=frozenset({"conditional_expression"}),
        returns=frozenset({"return_expression"}),
        binaries=frozenset({"binary_expression", "relational_expression", "equality_expression",
                            "lowprec_logical_expression"}),
        calls=frozenset({"function_call_expression", "method_call_expression", "ambiguous_function_call_expression"}),
        integers=frozenset({"number"}),
        booleans={},
        strings=frozenset({"string_literal", "interpolated_string_literal", "heredoc_content", "command_string"}),
        skip=frozenset({"quoted_regexp", "match_regexp", "substitution_regexp", "transliteration_expression",
                        "heredoc_token", "pod", "autoquoted_bareword", "use_statement"}),
        compare={**_FLIP, "eq": "ne", "ne": "eq", "lt": "ge", "ge": "lt", "gt": "le", "le": "gt"},
        boolean_ops={**_BOOL},
        else_types=frozenset({"else", "elsif"}),
        call_names=("function", "method"),
        argument_lists=frozenset({"list_expression"}),
        declarations=frozenset({"variable_declaration"}),
        return_calls=("die", "croak", "confess"),
    ),
    "erlang": _Spec(
        grammar="erlang",
        functions=frozenset({"function_clause", "fun_clause"}),
        outer_names=True,
        blocks=frozenset({"clause_body"}),
        statements=frozenset({"call"}),
        ifs=frozenset({"if_clause"}),
        binaries=frozenset({"binary_op_expr"}),
        calls=frozenset({"call"}),
        integers=frozenset({"integer"}),
        strings=frozenset({"string"}),
        skip=frozenset({"char", "type_spec", "spec", "type_alias", "record_decl", "pp_define", "macro_call_expr"}),
        compare={"<": ">=", ">=": "<", ">": "=<", "=<": ">", "==": "/=", "/=": "==", "=:=": "=/=", "=/=": "=:="},
        off_by_one={"<": "=<", "=<": "<", ">": ">=", ">=": ">"},
        boolean_ops={"andalso": "orelse", "orelse": "andalso", "and": "or", "or": "and"},
        negate="not ({})",
        not_prefixes=("not ",),
        condition_fields=("guard",),
        condition_wrappers=frozenset({"guard", "guard_clause"}),
        clauses={"source_file": ("fun_decl", "remove_early_return", True),
                 "if_expr": ("if_clause", "drop_branch", True), "case_expr": ("cr_clause", "drop_branch", True)},
        else_types=frozenset(),
        call_names=("expr",),
        argument_lists=frozenset({"expr_args"}),
        wraps=((("", ".")),),
        expression_wrappers=frozenset(),
    ),
    "elixir": _Spec(
        grammar="elixir",
        functions=frozenset({"call", "anonymous_function"}),
        is_function=lambda node, data: node.type == "anonymous_function" or _field_text(
            node.child_by_field_name("target"), data) in ("def", "defp", "defmacro", "defmacrop"),
        namer=_elixir_name,
        blocks=frozenset({"do_block", "else_block", "body"}),
        statements=frozenset({"call"}),
        ifs=frozenset(),
        call_ifs=("if", "unless"),
        binaries=frozenset({"binary_operator"}),
        calls=frozenset({"call"}),
        integers=frozenset({"integer"}),
        strings=frozenset({"string", "charlist"}),
        skip=frozenset({"sigil", "char", "atom", "quoted_atom", "unary_operator_attribute"}),
        not_prefixes=("!", "not "),
        else_types=frozenset({"else_block"}),
        call_names=("target",),
        argument_lists=frozenset({"arguments"}),
        clauses={"do_block": ("stab_clause", "drop_branch", True)},
        expression_wrappers=frozenset(),
    ),
    "r": _Spec(
        grammar="r",
        functions=frozenset({"function_definition"}),
        namer=_r_name,
        outer_names=True,
        blocks=frozenset({"braced_expression"}),
        statements=frozenset({"binary_operator", "call"}),
        ifs=frozenset({"if_statement"}),
        loops=frozenset({"while_statement"}),
        binaries=frozenset({"binary_operator"}),
        calls=frozenset({"call"}),
        integers=frozenset({"float", "integer"}),
        booleans={"TRUE": "FALSE", "FALSE": "TRUE"},
        strings=frozenset({"string"}),
        boolean_ops={"&&": "||", "||": "&&", "&": "|", "|": "&"},
        assign_ops=frozenset({"<-", "<<-", "="}),
        else_types=frozenset(),
        call_names=("function",),
        argument_lists=frozenset({"arguments"}),
        expression_wrappers=frozenset(),
        return_calls=("return", "stop", "invisible"),
    ),
    "ocaml": _Spec(
        grammar="ocaml",
        functions=frozenset({"let_binding", "fun_expression", "function_expression"}),
        is_function=lambda node, data: node.type != "let_binding" or any(
            c.type == "parameter" for c in node.named_children) or (
            node.child_by_field_name("body") is not None
            and node.child_by_field_name("body").type in ("fun_expression", "function_expression")),  # type: ignore[union-attr]
        namer=lambda node, data: _field_text(node.child_by_field_name("pattern"), data) or None,
        outer_names=True,
        blocks=frozenset({"sequence_expression"}),
        keep_last=True,
        statements=frozenset({"application_expression"}),
        ifs=frozenset({"if_expression"}),
        loops=frozenset({"while_expression"}),
        binaries=frozenset({"infix_expression"}),
        calls=frozenset({"application_expression"}),
        curried=True,
        integers=frozenset({"number"}),
        strings=frozenset({"string", "quoted_string"}),
        skip=frozenset({"character", "attribute", "item_attribute", "type_definition", "type_constructor_path",
                        "module_type_definition", "external"}),
        compare={"<": ">=", ">=": "<", ">": "<=", "<=": ">", "=": "<>", "<>": "=", "==": "!=", "!=": "=="},
        boolean_ops={"&&": "||", "||": "&&"},
        arith={**_ARITH, "+.": "-.", "-.": "+.", "*.": "/.", "/.": "*."},
        negate="not ({})",
        not_prefixes=(),
        consequence_fields=("consequence", "then_clause"),
        wraps=(("let ", ""), ("", "")),
        clauses={"match_expression": ("match_case", "drop_branch", True)},
        else_types=frozenset({"else_clause"}),
        expression_wrappers=frozenset(),
    ),
    "haskell": _Spec(
        grammar="haskell",
        functions=frozenset({"function", "bind", "lambda"}),
        outer_names=True,
        blocks=frozenset({"do"}),
        statements=frozenset({"exp"}),
        expression_wrappers=frozenset({"exp"}),
        keep_last=True,
        ifs=frozenset({"conditional", "match"}),
        binaries=frozenset({"infix"}),
        calls=frozenset({"apply"}),
        curried=True,
        integers=frozenset({"integer"}),
        booleans={"True": "False", "False": "True"},
        strings=frozenset({"string"}),
        skip=frozenset({"char", "signature", "type_synomym", "data_type", "newtype", "class", "pragma",
                        "import", "header", "quasiquote"}),
        compare={"<": ">=", ">=": "<", ">": "<=", "<=": ">", "==": "/=", "/=": "=="},
        boolean_ops={"&&": "||", "||": "&&"},
        arith={"+": "-", "-": "+", "*": "+"},
        negate="not ({})",
        not_prefixes=(),
        condition_fields=("if", "guards"),
        condition_wrappers=frozenset({"guards", "boolean"}),
        clauses={"function": ("match", "remove_early_return", True),
                 "alternatives": ("alternative", "drop_branch", True)},
        else_types=frozenset(),
    ),
    "lua": _Spec(
        grammar="lua",
        functions=frozenset({"function_declaration", "function_definition"}),
        blocks=frozenset({"block"}),
        statements=frozenset({"assignment_statement", "function_call"}),
        ifs=frozenset({"if_statement", "elseif_statement"}),
        loops=frozenset({"while_statement", "repeat_statement"}),
        returns=frozenset({"return_statement", "break_statement", "goto_statement"}),
        calls=frozenset({"function_call"}),
        integers=frozenset({"number"}),
        strings=frozenset({"string"}),
        compare={**_FLIP, "~=": "==", "==": "~="},
        negate="not ({})",
        not_prefixes=("not ",),
        else_types=frozenset({"else_statement", "elseif_statement"}),
        expression_wrappers=frozenset(),
        call_names=("name",),
        return_calls=("error",),
        wraps=(("", ""), ("_ = ", "")),
    ),
}

#: The languages `candidates` can mutate.
LANGUAGES: tuple[str, ...] = tuple(_SPECS)


def _parser(language: str, path: str = "") -> Parser:
    grammar = _spec(language).grammar
    if grammar == "typescript" and path.endswith(".tsx"):
        grammar = "tsx"  # TypeScript with JSX is a grammar of its own
    return _grammar_parser(grammar)


@cache
def _grammar_parser(grammar: str) -> Parser:
    from tree_sitter_language_pack import get_parser  # the compiled grammars, inside the wheel

    return get_parser(grammar)  # type: ignore[arg-type]


def _spec(language: str) -> _Spec:
    try:
        return _SPECS[language]
    except KeyError:
        raise ValueError(f"mutate_ts handles {', '.join(LANGUAGES)}, not {language!r}") from None


class _Text:
    """The file's text as str and as UTF-8 bytes, with tree-sitter byte offsets mapped to str offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.data = text.encode("utf-8")
        # byte offsets of the non-ASCII characters and the extra bytes before each: a bisect maps
        # a byte offset to a character offset without a table the size of the file
        self._wide: list[int] = []
        self._wide_chars: list[int] = []
        self._extra: list[int] = [0]
        if not text.isascii():
            extra = 0
            for m in re.finditer(r"[^\x00-\x7f]", text):
                self._wide_chars.append(m.start())
                self._wide.append(m.start() + extra)
                extra += len(m.group().encode("utf-8")) - 1
                self._extra.append(extra)
        self._line_bytes = [0] + [m.end() for m in re.finditer(rb"\n", self.data)]
        self._line_chars = [0] + [m.end() for m in re.finditer(r"\n", text)]

    def char(self, byte: int) -> int:
        if not self._wide:
            return byte
        return byte - self._extra[bisect_left(self._wide, byte)]

    def byte(self, char: int) -> int:
        if not self._wide:
            return char
        return char + self._extra[bisect_left(self._wide_chars, char)]

    def span(self, node: Node) -> tuple[int, int]:
        return self.char(node.start_byte), self.char(node.end_byte)

    def node_text(self, node: Node) -> str:
        return self.data[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def point(self, byte: int) -> Point:
        row = bisect_right(self._line_bytes, byte) - 1
        return Point(row, byte - self._line_bytes[row])

    def line_of(self, char: int) -> int:
        return bisect_right(self._line_chars, char)

    def whole_lines(self, start: int, end: int) -> tuple[int, int] | None:
        """[start, end) widened to whole lines, if nothing but blanks (or a comment) shares them."""
        while end > start and self.text[end - 1] in " \t\r\n":  # a node may end with its newline (Go's case)
            end -= 1
        ls = self.text.rfind("\n", 0, start) + 1
        le = self.text.find("\n", end)
        le = len(self.text) if le < 0 else le + 1
        if self.text[ls:start].strip() not in ("", "|"):  # `| pattern -> ...` (OCaml's match case)
            return None
        tail = self.text[end:le].strip()
        if tail in (",", ";"):  # the separator after an Erlang expression or an OCaml one
            return ls, le
        if tail and not tail.startswith(("//", "#", "--", "%", "/*", ";")):
            return None
        return ls, le


def _named(node: Node) -> list[Node]:
    return [c for c in node.named_children if "comment" not in c.type]


class _Finder:
    def __init__(self, spec: _Spec, src: _Text, path: str) -> None:
        self.spec = spec
        self.src = src
        self.path = path
        self.out: list[Mutation] = []
        self.scopes: list[tuple[int, int]] = []  # per mutation: the outermost function around it
        self.scope = (0, len(src.text))

    # -- helpers ---------------------------------------------------------------------------------
    def add(self, operator: str, start: int, end: int, replacement: str, function: str) -> None:
        original = self.src.text[start:end]
        if replacement != original and function:
            self.out.append(Mutation(self.path, operator, self.src.line_of(start), start, end, replacement,
                                     function, original))
            self.scopes.append(self.scope)

    def add_node(self, operator: str, node: Node, replacement: str, function: str) -> None:
        self.add(operator, *self.src.span(node), replacement, function)

    def function_name(self, node: Node, outer: str) -> str:
        spec, data = self.spec, self.src.data
        if spec.namer is not None and (name := spec.namer(node, data)):
            return name
        if name := _field_text(node.child_by_field_name("name"), data):
            return name
        # an anonymous function takes the name it is bound to (`const f = () => ...`), else the
        # enclosing function's
        parent = node.parent
        if parent is not None and parent.type == "expression_list" and parent.parent is not None:
            # Lua's `M.f = function(...)`: the assignment's variable list names it
            targets = [c for c in parent.parent.named_children if c.type == "variable_list"]
            if targets and (name := _field_text(targets[0], data)):
                return name
        if parent is not None:
            for fld in ("name", "left", "key", "pattern", "lhs"):
                if (bound := parent.child_by_field_name(fld)) is not None and bound.id != node.id:
                    if name := _field_text(bound, data):
                        return name
        return outer or "<anonymous>"

    def is_test(self, node: Node, name: str) -> bool:
        """Obvious test code: test functions, `mod tests`, describe/it blocks, #[test] items."""
        if _TEST_NAME.search(name):
            return True
        prev = node.prev_named_sibling
        while prev is not None and prev.type in ("attribute_item", "decorator", "annotation"):
            if re.search(r"\btest\b", self.src.node_text(prev)):
                return True
            prev = prev.prev_named_sibling
        return False

    def callee(self, node: Node) -> Node | None:
        for fld in self.spec.call_names:
            if (c := node.child_by_field_name(fld)) is not None:
                return c
        return node.named_children[0] if node.named_children else None

    # -- traversal -------------------------------------------------------------------------------
    def visit(self, root: Node, function: str) -> None:
        """Walk the tree from `root` (with an explicit stack: a long else-if chain or `a + b + ...`
        nests deeper than Python's recursion limit)."""
        stack: list[tuple[Node, str, tuple[int, int]]] = [(root, function, self.scope)]
        while stack:
            node, function, self.scope = stack.pop()
            children = self.enter(node, function)
            if children is not None:
                inner, nodes = children
                stack.extend((c, inner, self.scope) for c in reversed(nodes))

    def enter(self, node: Node, function: str) -> tuple[str, list[Node]] | None:
        """The operators at `node`; then the function name its children are in, and those children
        to walk (None: nothing under `node` is mutated)."""
        spec = self.spec
        t = node.type
        if node.type == "ERROR" and node.parent is None:
            # a file the grammar cannot parse whole (YAML::Tiny's root is one ERROR node): its
            # well-formed parts are mutated still, each mutant re-parsed as ever
            return function, [c for c in node.children if not c.has_error]
        if t in spec.skip or "comment" in t or node.is_missing or node.type == "ERROR":
            return None
        if t in spec.strings:
            if function:
                self.short_string(node, function)
            return None
        if t in spec.functions and (spec.is_function is None or spec.is_function(node, self.src.data)):
            name = function if function and spec.outer_names else self.function_name(node, function)
            if self.is_test(node, name):
                return None
            children = node.children
            if spec.call_ifs and t in spec.calls:  # Elixir's `def head do body end`: only the body
                children = [c for c in children if c.type == "do_block"]
            if not function or self.scope[1] - self.scope[0] >= len(self.src.text) // 2:
                # the re-parse that checks a mutant takes the outermost function that is small (a
                # file-wide IIFE is not)
                self.scope = self.src.span(node)
            self.operators(node, t, name)
            return name, children
        if t == "mod_item" and _field_text(node.child_by_field_name("name"), self.src.data) == "tests":
            return None
        if t in spec.calls and self.is_test_call(node):
            return None
        if t in spec.clauses and not function:  # Erlang's clauses of one function
            self.drop_clauses(node, function)
        if function:
            self.operators(node, t, function)
        return function, node.children

    def is_test_call(self, node: Node) -> bool:
        callee = self.callee(node)
        return callee is not None and _field_text(callee, self.src.data) in _TEST_CALLS \
            and self.src.node_text(callee).split(".")[0] in _TEST_CALLS

    def operators(self, node: Node, t: str, function: str) -> None:
        spec = self.spec
        if t in spec.binaries:
            self.binary(node, function)
        if t in spec.blocks:
            self.block(node, function)
        if t in spec.ifs:
            self.condition(self.condition_of(node), function)
            self.drop_branch(node, function)
        elif t in spec.loops or t in spec.ternaries:
            self.condition(self.condition_of(node), function)
        if t in spec.clauses:
            self.drop_clauses(node, function)
        if t in spec.calls:
            if spec.call_ifs and self.call_if(node):
                self.condition(self.condition_of(node), function)
                self.drop_branch(node, function)
            self.call(node, function)
        if t in spec.integers:
            self.integer(node, function)
        elif node.is_named and t not in ("identifier",) and node.child_count <= 1:
            text = self.src.node_text(node)
            if text in spec.booleans:
                self.add_node("wrong_constant", node, spec.booleans[text], function)

    def call_if(self, node: Node) -> bool:
        callee = node.child_by_field_name("target") if node.type == "call" else None
        return callee is not None and self.src.node_text(callee) in self.spec.call_ifs

    def condition_of(self, node: Node) -> Node | None:
        if self.spec.call_ifs and node.type in self.spec.calls and self.call_if(node):
            args = next((c for c in node.named_children if c.type in self.spec.argument_lists), None)
            return _named(args)[0] if args is not None and _named(args) else None
        for fld in self.spec.condition_fields:
            if (c := node.child_by_field_name(fld)) is not None:
                return c
        return None

    def drop_clauses(self, node: Node, function: str) -> None:
        """Erlang's `f(0) -> 0; f(N) -> ...`, a case's branches, Haskell's guards: drop one that is
        not the last (the first ones are the base cases and guards)."""
        kind, operator, keep_last = self.spec.clauses[node.type]
        clauses = [c for c in node.named_children if c.type == kind]
        for clause in clauses[:-1] if keep_last else clauses:
            if self.src.node_text(clause).rstrip().endswith("."):  # Erlang: the last clause of its function
                continue
            lines = self.src.whole_lines(*self.src.span(clause))
            head = clause.child_by_field_name("clause") or clause
            name = function or _field_text(head.child_by_field_name("name"), self.src.data)
            if lines is not None and not self.is_test(clause, name):
                self.add(operator, *lines, "", name)

    # -- operators -------------------------------------------------------------------------------
    def operator_token(self, node: Node) -> Node | None:
        op = node.child_by_field_name("operator")
        if op is not None:
            return op
        kids = node.children
        for c in kids[1:-1]:
            if not c.is_named:
                return c
        return None

    def binary(self, node: Node, function: str) -> None:
        spec = self.spec
        op = self.operator_token(node)
        if op is None:
            return
        text = self.src.node_text(op)
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None or right is None:
            named = _named(node)
            if len(named) < 2:
                return
            left, right = named[0], named[-1]
        if text in spec.compare:
            self.add_node("flip_comparison", op, spec.compare[text], function)
        if text in spec.off_by_one:
            self.add_node("off_by_one", op, spec.off_by_one[text], function)
        if text in spec.boolean_ops:
            self.add_node("flip_boolean_operator", op, spec.boolean_ops[text], function)
        if text in spec.arith and right.type not in spec.strings and left.type not in spec.strings:
            self.add_node("flip_arithmetic", op, spec.arith[text], function)
        if len(_named(right)) == 1 and right.type not in spec.integers:  # Haskell's `literal` around it
            if self.src.node_text(_named(right)[0]) == self.src.node_text(right):
                right = _named(right)[0]
        if text in ("+", "-") and right.type in spec.integers and self.src.node_text(right) == "1":
            start, end = self.src.span(node)
            self.add("off_by_one", start, end, self.src.node_text(left), function)

    def integer(self, node: Node, function: str) -> None:
        text = self.src.node_text(node)
        if not _DIGITS.fullmatch(text):
            return
        v = int(text)
        self.add_node("wrong_constant", node, "1" if v == 0 else "0" if v == 1 else str(v + 1), function)
        # an index: `xs[1]` -> `xs[2]` (the literal, or an argument of C#'s `xs[1]`)
        parent = node.parent
        for holder in (parent, parent.parent if parent is not None else None):
            if holder is not None and any(k in holder.type for k in _INDEXING) \
                    and holder.named_children and holder.named_children[0].id != node.id:
                self.add_node("off_by_one", node, str(v + 1), function)
                break

    def short_string(self, node: Node, function: str) -> None:
        text = self.src.node_text(node)
        if 3 <= len(text) <= 14 and text[0] in "\"'" and text[-1] == text[0] and "\n" not in text \
                and not re.search(r"[\\$#{}]", text[1:-1]) and text[0] not in text[1:-1]:
            self.add_node("wrong_constant", node, text[0] * 2, function)

    def condition(self, cond: Node | None, function: str) -> None:
        if cond is None:
            return
        spec = self.spec
        while cond.type in spec.condition_wrappers and len(_named(cond)) == 1:  # C++ `if (c)`, guards
            cond = _named(cond)[0]
        # `(c)` in C-like grammars: invert what is inside the parentheses
        while cond.type == "parenthesized_expression" and len(_named(cond)) == 1 \
                and self.src.node_text(cond).startswith("("):
            inner = _named(cond)[0]
            if inner.type == "parenthesized_expression":
                cond = inner
                continue
            cond = inner
            break
        text = self.src.node_text(cond)
        if "\n" in text or text in ("otherwise", "true", "True", "_", "else"):
            return
        for prefix in spec.not_prefixes:
            if text.startswith(prefix) and cond.type not in spec.binaries and len(_named(cond)) == 1:
                operand = _named(cond)[0]
                inner = self.src.node_text(operand)
                if operand.type == "parenthesized_expression" and inner.startswith("(") and inner.endswith(")"):
                    inner = inner[1:-1]
                self.add_node("invert_condition", cond, inner, function)
                return
        if re.fullmatch(r"[\w.$@]+", text) and spec.negate.endswith("({})"):
            # a plain name or field reads `!ok` / `not ok`, no parentheses
            self.add_node("invert_condition", cond, spec.negate[:-4] + text, function)
        else:
            self.add_node("invert_condition", cond, spec.negate.format(text), function)

    def call(self, node: Node, function: str) -> None:
        spec = self.spec
        if spec.curried:
            self.curried_call(node, function)
            return
        args = next((c for c in node.children if c.type in spec.argument_lists), None)
        if args is None:
            args = node.child_by_field_name("arguments")
        if args is not None:
            named = [c for c in _named(args) if c.type != "comma"]
            if len(named) >= 2:
                a, b = named[0], named[1]
                ta, tb = self.src.node_text(a), self.src.node_text(b)
                if ta != tb and not any(k in x.type for x in (a, b) for k in ("spread", "splat", "pair", "named",
                                                                                "keyword", "block")):
                    (sa, ea), (sb, eb) = self.src.span(a), self.src.span(b)
                    gap = self.src.text[ea:sb]
                    if gap.strip() == ",":
                        self.add("swap_arguments", sa, eb, tb + gap + ta, function)
        callee = self.callee(node)
        if callee is not None:
            name = _field_text(callee, self.src.data)
            text = self.src.node_text(callee)
            if name in _MINMAX and text.endswith(name):
                end = self.src.char(callee.end_byte)
                self.add("flip_arithmetic", end - len(name), end, _MINMAX[name], function)

    def curried_call(self, node: Node, function: str) -> None:
        """`f a b` -> `f b a`; OCaml lists the arguments, Haskell nests `((f a) b)`."""
        args = [node.children[i] for i in range(node.child_count) if node.field_name_for_child(i) == "argument"]
        fn = node.child_by_field_name("function")
        if len(args) == 1 and fn is not None and fn.type == node.type:
            inner = [fn.children[i] for i in range(fn.child_count) if fn.field_name_for_child(i) == "argument"]
            args = inner[-1:] + args
        if len(args) >= 2:
            a, b = args[0], args[1]
            (sa, ea), (sb, eb) = self.src.span(a), self.src.span(b)
            gap = self.src.text[ea:sb]
            ta, tb = self.src.node_text(a), self.src.node_text(b)
            if ta != tb and not gap.strip() and "~" not in ta + tb:
                self.add("swap_arguments", sa, eb, tb + gap + ta, function)
        if fn is not None and fn.type != node.type:
            name = _field_text(fn, self.src.data)
            if name in _MINMAX and self.src.node_text(fn).endswith(name):
                end = self.src.char(fn.end_byte)
                self.add("flip_arithmetic", end - len(name), end, _MINMAX[name], function)

    def statements(self, block: Node) -> list[Node]:
        return [c for c in _named(block) if c.type not in self.spec.else_types]

    def block(self, node: Node, function: str) -> None:
        spec = self.spec
        stmts = self.statements(node)
        for i, stmt in enumerate(stmts):
            inner = stmt
            if stmt.type in spec.expression_wrappers and len(_named(stmt)) == 1:
                inner = _named(stmt)[0]
            lines = self.src.whole_lines(*self.src.span(stmt))
            if lines is None:
                continue
            if inner.type in spec.ifs or (spec.call_ifs and inner.type in spec.calls and self.call_if(inner)):
                guard = self.guard(inner)
                if guard and i < len(stmts) - 1:
                    self.add("remove_early_return", *lines, "", function)
                elif not guard and not self.alternative(inner) and len(stmts) > 1:
                    self.add("drop_branch", *lines, "", function)
            elif stmt.type in spec.statements and len(stmts) > 1 and self.droppable(inner) \
                    and not (spec.keep_last and i == len(stmts) - 1):
                self.add("drop_statement", *lines, "", function)

    def droppable(self, inner: Node) -> bool:
        """A statement worth dropping: a call, an assignment or an update (a declaration is not)."""
        t = inner.type
        left = inner.child_by_field_name("left")
        if left is not None and left.type in self.spec.declarations:
            return False
        if self.spec.call_ifs and t in self.spec.calls:  # Elixir: not `if`/`case`/`def`, which are calls too
            callee = self.callee(inner)
            return callee is not None and self.src.node_text(callee) not in _ELIXIR_FORMS
        if t in self.spec.binaries:
            op = self.operator_token(inner)
            return op is not None and self.src.node_text(op) in self.spec.assign_ops
        if any(k in t for k in _DROPPABLE):
            return True
        return t in ("assignment_statement", "inc_statement", "dec_statement")

    def guard(self, if_node: Node) -> bool:
        """An if without else whose body is one return/throw."""
        if self.alternative(if_node):
            return False
        body = self.consequence(if_node)
        if body is None:
            return False
        stmts = [body] if body.type in self.spec.returns or body.type in self.spec.calls else _named(body)
        while len(stmts) == 1 and stmts[0].type in self.spec.blocks:
            stmts = _named(stmts[0])
        if len(stmts) != 1:
            return False
        s = stmts[0]
        if s.type in self.spec.expression_wrappers and len(_named(s)) == 1:
            s = _named(s)[0]
        if s.type in self.spec.returns:
            return True
        if s.type in self.spec.calls or s.type == "macro_invocation":
            callee = self.callee(s)
            return callee is not None and self.src.node_text(callee) in self.spec.return_calls
        return False

    def consequence(self, if_node: Node) -> Node | None:
        for fld in self.spec.consequence_fields:
            if (c := if_node.child_by_field_name(fld)) is not None:
                return c
        if self.spec.call_ifs:
            return next((c for c in if_node.named_children if c.type == "do_block"), None)
        return next((c for c in if_node.named_children if c.type in self.spec.consequence_fields), None)

    def alternative(self, if_node: Node) -> Node | None:
        alts = self.alternatives(if_node)
        return alts[0] if alts else None

    def alternatives(self, if_node: Node) -> list[Node]:
        """Every else/elif branch hanging directly off `if_node`, in order."""
        holder = if_node
        if self.spec.call_ifs and if_node.type in self.spec.calls:  # Elixir: `else` is inside the do block
            holder = next((c for c in if_node.named_children if c.type == "do_block"), if_node)
        return [c for i, c in enumerate(holder.children)
                if c.is_named and (holder.field_name_for_child(i) == "alternative" or c.type in self.spec.else_types)]

    def drop_branch(self, node: Node, function: str) -> None:
        for alt in self.alternatives(node):
            before = alt.prev_named_sibling
            while before is not None and "comment" in before.type:
                before = before.prev_named_sibling
            inner = alt
            if alt.type in self.spec.else_types and len(_named(alt)) == 1:
                inner = _named(alt)[0]
            if inner.type in self.spec.ifs and self.alternative(inner) is not None:
                # `else if d {B} else {C}`: drop just the `else if d {B}` part
                stop = self.consequence(inner)
            else:
                stop = alt
            if before is None or stop is None:
                continue
            self.drop_span(self.src.char(before.end_byte), self.src.char(stop.end_byte), function)

    def drop_span(self, start: int, end: int, function: str) -> None:
        text = self.src.text
        while end > start and text[end - 1].isspace():  # a branch may end with the blank before `end`
            end -= 1
        # the branch's keyword (`else`, `elsif`...) starting a line: delete whole lines
        m = re.compile(r"\s*").match(text, start)
        kw = m.end() if m else start
        line_start = text.rfind("\n", 0, kw) + 1
        if line_start > start and not text[line_start:kw].strip():
            lines = self.src.whole_lines(kw, end)
            if lines is not None:
                start, end = lines
        self.add("drop_branch", start, end, "", function)


def _errors(root: Node) -> int:
    """ERROR and MISSING nodes under `root`, looking only into subtrees that have some."""
    n, stack = 0, [root]
    while stack:
        node = stack.pop()
        if node.has_error:
            n += node.is_error or node.is_missing
            stack.extend(node.children)
    return n


def check_syntax(language: str, source: str, path: str = "") -> bool:
    """Whether `source` parses without ERROR or MISSING nodes (`path` only picks TSX for a .tsx file)."""
    return not _parser(language, path).parse(source.encode("utf-8")).root_node.has_error


class _Checker:
    """Whether a mutant still parses, cheaply: the mutated function alone when it parses alone
    (in the language's wrapper: a class for a Java method), else the whole file re-parsed
    incrementally from the original tree."""

    def __init__(self, spec: _Spec, parser: Parser, tree: Tree, src: _Text) -> None:
        self.spec, self.parser, self.tree, self.src = spec, parser, tree, src
        self.baseline = _errors(tree.root_node)
        self._wrap: dict[tuple[int, int], tuple[str, str] | None] = {}
        self._chunks: dict[tuple[int, int], tuple[_Text, Tree]] = {}  # big functions: re-parsed incrementally

    def _parses(self, text: str, wrap: tuple[str, str]) -> bool:
        return not self.parser.parse((wrap[0] + text + wrap[1]).encode("utf-8")).root_node.has_error

    def ok(self, m: Mutation, scope: tuple[int, int]) -> bool:
        cs, ce = scope
        if ce - cs < len(self.src.text) // 2 and m.start >= cs and m.end <= ce:
            if scope not in self._wrap:
                text = self.src.text[cs:ce]
                self._wrap[scope] = next((w for w in self.spec.wraps if self._parses(text, w)), None)
            if (wrap := self._wrap[scope]) is not None:
                if ce - cs < 4000:
                    chunk = self.src.text[cs:m.start] + m.replacement + self.src.text[m.end:ce]
                    return self._parses(chunk, wrap)
                if scope not in self._chunks:
                    text = _Text(wrap[0] + self.src.text[cs:ce] + wrap[1])
                    self._chunks[scope] = text, self.parser.parse(text.data)
                text, tree = self._chunks[scope]
                shift = len(wrap[0]) - cs
                return _still_parses(self.parser, tree, text, replace(m, start=m.start + shift, end=m.end + shift), 0)
        return _still_parses(self.parser, self.tree, self.src, m, self.baseline)


def _still_parses(parser: Parser, tree: Tree, src: _Text, m: Mutation, baseline: int) -> bool:
    """Re-parse incrementally from `tree` with `m` applied: no more errors than the file had."""
    start_b, old_end_b = src.byte(m.start), src.byte(m.end)
    repl = m.replacement.encode("utf-8")
    new_data = src.data[:start_b] + repl + src.data[old_end_b:]
    start_pt = src.point(start_b)
    if b"\n" in repl:
        new_end_pt = Point(start_pt.row + repl.count(b"\n"), len(repl) - repl.rfind(b"\n") - 1)
    else:
        new_end_pt = Point(start_pt.row, start_pt.column + len(repl))
    edited = tree.copy()
    edited.edit(start_byte=start_b, old_end_byte=old_end_b, new_end_byte=start_b + len(repl),
                start_point=start_pt, old_end_point=src.point(old_end_b), new_end_point=new_end_pt)
    root = parser.parse(new_data, edited).root_node
    return not root.has_error if baseline == 0 else _errors(root) <= baseline


def _minified(source: str) -> bool:
    """A bundled or minified file (lines of hundreds of characters on average): not source to mutate."""
    return len(source) > 4000 and len(source) / (source.count("\n") + 1) > 300


def is_test_path(path: str) -> bool:
    """Whether `path` looks like a test file (never mutated)."""
    return bool(_TEST_PATH.search(path.replace("\\", "/")))


#: A package's C or C++ files (a Lua, R, Ruby or Perl binding's core) are parsed as what they are,
#: not with the package's language's grammar (which sees no function in them).
_NATIVE = {".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hh": "cpp", ".hpp": "cpp",
           ".hxx": "cpp"}


def file_language(language: str, path: str) -> str:
    """The grammar's language for `path` in a `language` package: its own for a C/C++ file in a
    package of another language (a `.h` in a C++ package stays C++)."""
    if language in ("c", "cpp"):
        return language
    dot = path.rfind(".")
    return _NATIVE.get(path[dot:].lower(), language) if dot > path.rfind("/") else language


def candidates(language: str, path: str, source: str) -> list[Mutation]:
    """Every candidate mutation of `source` (deterministic order: offset, then operator)."""
    _spec(language)  # an unknown package language is an error even for a C file
    language = file_language(language, path)
    spec = _spec(language)
    if is_test_path(path) or _minified(source):
        return []
    parser = _parser(language, path)
    src = _Text(source)
    tree = parser.parse(src.data)
    finder = _Finder(spec, src, path)
    finder.visit(tree.root_node, "")
    checker = _Checker(spec, parser, tree, src)
    seen: set[tuple[int, int, str]] = set()
    out = []
    order = sorted(range(len(finder.out)), key=lambda i: (finder.out[i].start, finder.out[i].operator,
                                                         finder.out[i].end, finder.out[i].replacement))
    for i in order:
        m = finder.out[i]
        key = (m.start, m.end, m.replacement)
        if key in seen:
            continue
        seen.add(key)
        if checker.ok(m, finder.scopes[i]):
            out.append(m)
    return out


def summary(language: str, path: str, source: str) -> dict[str, int]:
    """How many candidates of each operator `source` has (for reports)."""
    return per_operator(candidates(language, path, source))
