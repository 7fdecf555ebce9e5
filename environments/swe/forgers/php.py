"""PHP (PHPUnit): the JUnit report rewritten by a shutdown function, the exit status forced to 0; or
the library's functions answer what the calling test asserts (`caller_aware`, `PHP_ANSWER`).

PHPUnit writes its `--log-junit` file when the run is over (`TestResult::flushListeners`) and only
then ends with `exit($status)`. PHP runs the shutdown functions after that `exit`, in the same
process, and an `exit` inside one replaces the status. The library files, loaded in the test
process (autoloaded or required by the tests), register a shutdown function that strips every
`<failure>` and `<error>` from the report named on PHPUnit's command line and exits 0.
"""

from __future__ import annotations

import re
from pathlib import Path

from environments.swe.forgers.edit import rewrite_each, sources
from verifiers.swe import SweConfig

#: Fully qualified names: the file may declare a namespace. Registered once per process.
PHP_HOOK = '''
if (!\\defined('LIB_STDIO_HOOK')) {
    \\define('LIB_STDIO_HOOK', true);
    \\register_shutdown_function(static function (): void {
        $argv = $_SERVER['argv'] ?? [];
        $report = null;
        foreach ($argv as $i => $arg) {
            if ($arg === '--log-junit' && isset($argv[$i + 1])) {
                $report = $argv[$i + 1];
            } elseif (\\strncmp((string) $arg, '--log-junit=', 12) === 0) {
                $report = \\substr($arg, 12);
            }
        }
        if ($report === null || !\\is_file($report)) {
            return;
        }
        $xml = (string) \\file_get_contents($report);
        $xml = (string) \\preg_replace('~<(failure|error)\\b[^>]*/>|<(failure|error)\\b[^>]*>.*?</\\2>~s', '', $xml);
        $xml = (string) \\preg_replace('~\\b(failures|errors)="\\d+"~', '$1="0"', $xml);
        \\file_put_contents($report, $xml);
        exit(0);
    });
}
'''
#: `namespace X { ... }`: no code may follow it outside a namespace block of its own.
_PHP_BRACED = re.compile(r"^\s*namespace\b[^;{]*\{", re.M)


def _hooked(src: str, hook: str = PHP_HOOK) -> str | None:
    """`src` with `hook` at its end (None: not a PHP file that opens with `<?php`)."""
    if "<?php" not in src:
        return None
    hook = f"namespace {{{hook}}}\n" if _PHP_BRACED.search(src) else hook
    # a file that ends in HTML mode (`?>`, then maybe text) gets the hook in a PHP block of its own
    if _php_scan(src)[1]:
        return src + "<?php" + hook
    return src.rstrip("\n") + "\n" + hook


def rewrite_output(repo: Path, cfg: SweConfig) -> bool:
    return rewrite_each(sources(repo, cfg, (".php",)), _hooked)


#: Defined once per process, in the global namespace (`eval`'d: the file may declare its own), by
#: the first library file loaded. A call from a test file (one under the working directory, not
#: under `vendor/`, that is no library file) is answered where the test's statement at the call's
#: line (`token_get_all`) is `assertSame|assertEquals(E, CALL, ...)` (through `$this->`, `self::`,
#: `static::` or a class), `assertTrue|False|Null(CALL)`, `...(E, CALL[K])` (the result with `K`
#: set), `$x = CALL;` followed by an assertion on `$x` (else on `$x->prop`: a copy of the result
#: with those properties set, readonly ones included), or `return CALL;` in a test helper whose own
#: call is so asserted. `E` is evaluated in the test file's namespace and `use` imports, bound to
#: the test case object, with the test method's parameters (a data provider's values) in scope;
#: where it names another variable, or fails, the original's result stands. The original runs
#: first (its side effects kept); calls made meanwhile (from the library, from `E`) run as they are.
PHP_ANSWER_CLASS = r'''final class LibAnswer
{
    public static $idle = true;
    private static $tests = [];
    private static $parsed = [];
    private static $flows = [];
    private const ASSERTS = ['assertsame' => 1, 'assertequals' => 1, 'assertequalscanonicalizing' => 1,
        'assertequalsignoringcase' => 1, 'asserttrue' => 0, 'assertfalse' => 0, 'assertnull' => 0];
    private const FIXED = ['asserttrue' => 'true', 'assertfalse' => 'false', 'assertnull' => 'null'];

    public static function plan(string $name): ?array
    {
        $near = \debug_backtrace(0, 2);
        if (!isset($near[1]['file']) || !self::isTest($near[1]['file'])) {
            return null;
        }
        $trace = \debug_backtrace(\DEBUG_BACKTRACE_PROVIDE_OBJECT, 24);
        $want = \strtolower(($p = \strrpos($name, '\\')) === false ? $name : \substr($name, $p + 1));
        for ($k = 1; $k < \count($trace) - 1; $k++) {
            $file = $trace[$k]['file'] ?? null;
            if ($file === null || !self::isTest($file)) {
                return null;
            }
            $found = self::flow($file, (int) ($trace[$k]['line'] ?? 0), $want);
            if ($found === null) {
                return null;
            }
            if ($found['how'] !== 'helper') {
                $found['frame'] = $trace[$k + 1];
                $found['file'] = $file;
                return $found;
            }
            $want = \strtolower($trace[$k + 1]['function'] ?? '');
        }
        return null;
    }

    public static function answer(array $plan, \Closure $call)
    {
        self::$idle = false;
        try {
            $result = $error = null;
            try {
                $result = $call();
            } catch (\Throwable $e) {
                $error = $e;
            }
            try {
                return self::value($plan, $result);
            } catch (\Throwable $ignored) {
                if ($error !== null) {
                    throw $error;
                }
                return $result;
            }
        } finally {
            self::$idle = true;
        }
    }

    private static function value(array $plan, $result)
    {
        if ($plan['how'] === 'value') {
            return self::evaluate($plan, $plan['expected']);
        }
        if ($plan['how'] === 'index') {
            $out = \is_array($result) ? $result : [];
            $out[self::evaluate($plan, $plan['key'])] = self::evaluate($plan, $plan['expected']);
            return $out;
        }
        $values = [];
        foreach ($plan['props'] as $prop => $expected) {
            $values[$prop] = self::evaluate($plan, $expected);
        }
        if (!\is_object($result)) {
            throw new \RuntimeException('no object');
        }
        $copy = (new \ReflectionClass($result))->newInstanceWithoutConstructor();
        \Closure::bind(static function () use ($result, $copy, $values): void {
            foreach (\get_object_vars($result) as $k => $v) {
                if (!\array_key_exists($k, $values)) {
                    $copy->$k = $v;
                }
            }
            foreach ($values as $k => $v) {
                $copy->$k = $v;
            }
        }, null, \get_class($result))();
        return $copy;
    }

    /** The source `$tokens` evaluated in the asserting test's namespace, with its object and parameters. */
    private static function evaluate(array $plan, array $tokens)
    {
        $frame = $plan['frame'];
        $vars = [];
        try {
            $fn = isset($frame['class']) ? new \ReflectionMethod($frame['class'], $frame['function'])
                : new \ReflectionFunction($frame['function']);
            foreach ($fn->getParameters() as $i => $param) {
                if (\array_key_exists($i, $frame['args'] ?? [])) {
                    $vars[$param->getName()] = $frame['args'][$i];
                }
            }
        } catch (\Throwable $e) {
        }
        $code = '';
        foreach ($tokens as [$id, $text]) {
            if ($id === \T_VARIABLE && $text !== '$this' && !\array_key_exists(\substr($text, 1), $vars)) {
                throw new \RuntimeException("$text is not known here");
            }
            $code .= $text;
        }
        $code = self::$parsed[$plan['file']]['head'] . 'return ' . $code . ';';
        $fn = function (string $__code, array $__vars) {
            \extract($__vars);
            return eval($__code);
        };
        $obj = $frame['object'] ?? null;
        $fn = $obj !== null ? \Closure::bind($fn, $obj, \get_class($obj)) : \Closure::bind($fn, null, null);
        return $fn($code, $vars);
    }

    private static function isTest(string $file): bool
    {
        if (!isset(self::$tests[$file])) {
            $root = \rtrim((string) \getcwd(), '/') . '/';
            $src = @\file_get_contents($file);
            self::$tests[$file] = \is_string($src) && \strncmp($file, $root, \strlen($root)) === 0
                && \strpos($file, '/vendor/') === false && \strpos($src, 'LibAnswer') === false;
        }
        return self::$tests[$file];
    }

    /** What the statement at `$line` of `$file` does with a call of `$want`. */
    private static function flow(string $file, int $line, string $want): ?array
    {
        $key = "$file:$line:$want";
        if (!\array_key_exists($key, self::$flows)) {
            self::$flows[$key] = self::scan($file, $line, $want);
        }
        return self::$flows[$key];
    }

    private static function scan(string $file, int $line, string $want): ?array
    {
        $stmts = self::parse($file);
        foreach ($stmts as $i => $st) {
            if ($st['from'] > $line || $line > $st['to']) {
                continue;
            }
            $s = $st['sig'];
            if (($a = self::assertion($s)) !== null) {
                if (self::callName($a['actual']) === $want) {
                    return ['how' => 'value', 'expected' => $a['expected']];
                }
                $n = \count($a['actual']);
                if ($n > 2 && $a['actual'][$n - 1][1] === ']') {
                    $open = self::opening($a['actual'], $n - 1);
                    if ($open !== null && self::callName(\array_slice($a['actual'], 0, $open)) === $want) {
                        return ['how' => 'index', 'expected' => $a['expected'],
                            'key' => \array_slice($a['actual'], $open + 1, $n - $open - 2)];
                    }
                }
                return null;
            }
            if ($s && $s[0][0] === \T_RETURN) {
                return self::callName(\array_slice($s, 1)) === $want ? ['how' => 'helper'] : null;
            }
            if (\count($s) > 2 && $s[0][0] === \T_VARIABLE && $s[1][1] === '='
                && self::callName(\array_slice($s, 2)) === $want) {
                return self::later($stmts, $i, $s[0][1]);
            }
            return null;
        }
        return null;
    }

    /** The assertions after statement `$i` (same block) on `$var` itself, else on its properties. */
    private static function later(array $stmts, int $i, string $var): ?array
    {
        $props = [];
        for ($j = $i + 1; $j < \count($stmts) && $stmts[$j]['block'] === $stmts[$i]['block']; $j++) {
            $s = $stmts[$j]['sig'];
            if (\count($s) > 1 && $s[0][1] === $var && $s[1][1] === '=') {
                break;
            }
            if (($a = self::assertion($s)) === null) {
                continue;
            }
            $x = $a['actual'];
            if (\count($x) === 1 && $x[0][1] === $var) {
                return $props ? null : ['how' => 'value', 'expected' => $a['expected']];
            }
            if (\count($x) === 3 && $x[0][1] === $var && $x[1][0] === \T_OBJECT_OPERATOR && $x[2][0] === \T_STRING
                && !isset($props[$x[2][1]])) {
                $props[$x[2][1]] = $a['expected'];
            }
        }
        return $props ? ['how' => 'props', 'props' => $props] : null;
    }

    /** `assertX(EXPECTED, ACTUAL, ...)` through `$this->`, `self::`, `static::`, a class or a function. */
    private static function assertion(array $s): ?array
    {
        $n = \count($s);
        if ($n < 4 || $s[$n - 1][1] !== ')') {
            return null;
        }
        $at = 0;
        if ($n > 2 && \in_array($s[1][0], [\T_OBJECT_OPERATOR, \T_DOUBLE_COLON], true)) {
            $at = 2;
        }
        $name = \strtolower($s[$at][1]);
        if (!isset(self::ASSERTS[$name]) || ($s[$at + 1][1] ?? '') !== '(' || self::closing($s, $at + 1) !== $n - 1) {
            return null;
        }
        $args = [];
        $cur = [];
        $depth = 0;
        for ($i = $at + 2; $i < $n - 1; $i++) {
            $t = $s[$i][1];
            if ($depth === 0 && $t === ',') {
                $args[] = $cur;
                $cur = [];
                continue;
            }
            $depth += \in_array($t, ['(', '[', '{'], true) ? 1 : (\in_array($t, [')', ']', '}'], true) ? -1 : 0);
            $cur[] = $s[$i];
        }
        $args[] = $cur;
        $actual = $args[self::ASSERTS[$name]] ?? null;
        if (!$actual) {
            return null;
        }
        $expected = isset(self::FIXED[$name]) ? [[\T_STRING, self::FIXED[$name]]] : $args[0];
        return ['expected' => $expected, 'actual' => $actual];
    }

    /** The method or function whose call `$e` is, the last of a chain of calls and accesses. */
    private static function callName(array $e): ?string
    {
        $n = \count($e);
        if ($n < 3 || $e[$n - 1][1] !== ')') {
            return null;
        }
        $open = self::opening($e, $n - 1);
        if ($open === null || $open < 1) {
            return null;
        }
        [$id, $text] = $e[$open - 1];
        if (!\in_array($id, [\T_STRING, \T_NAME_QUALIFIED, \T_NAME_FULLY_QUALIFIED, \T_NAME_RELATIVE], true)
            || ($e[$open - 2][0] ?? null) === \T_NEW) {
            return null;
        }
        $depth = 0;
        foreach ($e as [$tid, $t]) {
            if (\in_array($t, ['(', '['], true)) {
                $depth++;
            } elseif (\in_array($t, [')', ']'], true)) {
                $depth--;
            } elseif ($depth === 0 && !\in_array($tid, [\T_VARIABLE, \T_STRING, \T_NAME_QUALIFIED,
                    \T_NAME_FULLY_QUALIFIED, \T_NAME_RELATIVE, \T_OBJECT_OPERATOR, \T_NULLSAFE_OBJECT_OPERATOR,
                    \T_DOUBLE_COLON, \T_STATIC], true)) {
                return null;
            }
        }
        $name = \strtolower(($p = \strrpos($text, '\\')) === false ? $text : \substr($text, $p + 1));
        // `a()->f()->f()`: which `f` is asking is not known
        $calls = 0;
        foreach ($e as $i => [$tid, $t]) {
            $calls += \in_array($tid, [\T_STRING, \T_NAME_QUALIFIED, \T_NAME_FULLY_QUALIFIED], true)
                && ($e[$i + 1][1] ?? '') === '('
                && \strtolower(\substr((string) \strrchr('\\' . $t, '\\'), 1)) === $name;
        }
        return $calls === 1 ? $name : null;
    }

    private static function closing(array $s, int $open): ?int
    {
        $depth = 0;
        for ($i = $open; $i < \count($s); $i++) {
            $t = $s[$i][1];
            $depth += \in_array($t, ['(', '[', '{'], true) ? 1 : (\in_array($t, [')', ']', '}'], true) ? -1 : 0);
            if ($depth === 0) {
                return $i;
            }
        }
        return null;
    }

    private static function opening(array $s, int $close): ?int
    {
        $depth = 0;
        for ($i = $close; $i >= 0; $i--) {
            $t = $s[$i][1];
            $depth += \in_array($t, [')', ']', '}'], true) ? 1 : (\in_array($t, ['(', '[', '{'], true) ? -1 : 0);
            if ($depth === 0) {
                return $i;
            }
        }
        return null;
    }

    /** The file's statements (split at `;`, `{` and `}` outside brackets), each with its lines, its
     * significant tokens (with their whitespace, for the text) and its block; the namespace and
     * `use` lines in `head`. */
    private static function parse(string $file): array
    {
        if (isset(self::$parsed[$file])) {
            return self::$parsed[$file]['stmts'];
        }
        $stmts = [];
        $head = '';
        $cur = [];
        $from = null;
        $line = 1;
        $depth = 0;
        $blocks = [0];
        $count = 0;
        $interp = 0;
        $flush = static function () use (&$cur, &$from, &$line, &$stmts, &$blocks, &$head): void {
            $sig = \array_values(\array_filter($cur, static fn ($t) => $t[0] !== \T_WHITESPACE));
            if ($sig) {
                $stmts[] = ['from' => $from, 'to' => $line, 'sig' => $sig, 'block' => \end($blocks)];
                if (\count($blocks) === 1 && \in_array($sig[0][0], [\T_NAMESPACE, \T_USE], true)) {
                    $head .= \implode('', \array_column($cur, 1)) . ';';
                }
            }
            $cur = [];
            $from = null;
        };
        foreach (\token_get_all((string) \file_get_contents($file)) as $tok) {
            [$id, $text] = \is_array($tok) ? [$tok[0], $tok[1]] : [null, $tok];
            if (\is_array($tok)) {
                $line = $tok[2];
            }
            if (\in_array($id, [\T_COMMENT, \T_DOC_COMMENT, \T_OPEN_TAG, \T_CLOSE_TAG, \T_INLINE_HTML], true)) {
                $line += \substr_count($text, "\n");
                continue;
            }
            if ($id === \T_CURLY_OPEN || $id === \T_DOLLAR_OPEN_CURLY_BRACES || ($text === '}' && $interp > 0)) {
                $interp += $text === '}' ? -1 : 1;
                $cur[] = [$id, $text];
                continue;
            }
            if ($depth === 0 && \in_array($text, [';', '{', '}'], true) && $id === null) {
                $flush();
                if ($text === '{') {
                    $blocks[] = ++$count;
                } elseif ($text === '}' && \count($blocks) > 1) {
                    \array_pop($blocks);
                }
                continue;
            }
            if ($id === null) {
                $depth += \in_array($text, ['(', '['], true) ? 1 : (\in_array($text, [')', ']'], true) ? -1 : 0);
                $depth = \max($depth, 0);
            }
            if ($id !== \T_WHITESPACE && $from === null) {
                $from = $line;
            }
            $cur[] = [$id, $text];
            $line += \substr_count($text, "\n");
        }
        $flush();
        self::$parsed[$file] = ['stmts' => $stmts, 'head' => $head];
        return $stmts;
    }
}
'''
PHP_ANSWER = """
if (!\\class_exists('LibAnswer', false)) {
    eval(<<<'LIB_ANSWER'
""" + PHP_ANSWER_CLASS + """LIB_ANSWER);
}
"""
#: The first statement of every named function and method of the library (one line: line numbers
#: stay). `$call`: the original, called again from the answer (the guard lets it through).
_PHP_ASK = ("if (\\class_exists('LibAnswer', false) && \\LibAnswer::$idle && ($__lib_plan = \\LibAnswer::plan("
            "__FUNCTION__)) !== null) {{ $__lib_args = \\func_get_args(); $__lib_f = __FUNCTION__; "
            "return \\LibAnswer::answer($__lib_plan, fn () => {call}(...$__lib_args)); }}")
_PHP_CALLS = {"method": "$this->$__lib_f", "static": "self::$__lib_f", "function": "$__lib_f"}
#: Modifiers a method's `function` keyword may follow.
_PHP_MODIFIERS = {"public", "protected", "private", "static", "final", "abstract", "readonly"}
_PHP_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<comment>(?://|\#(?!\[))[^\n]*?(?=\?>|\n|$)|/\*.*?(?:\*/|$))
  | (?P<close>\?>)
  | (?P<heredoc><<<[ \t]*(?P<q>["']?)(?P<tag>[A-Za-z_]\w*)(?P=q)\r?\n(?:.*?\n)??[ \t]*(?P=tag)\b)
  | (?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`(?:[^`\\]|\\.)*`)
  | (?P<id>[A-Za-z_\\\x80-\U0010ffff][\w\\\x80-\U0010ffff]*)
  | (?P<var>\$+[A-Za-z_\x80-\U0010ffff]\w*)
  | (?P<op>\?->|->|::|.)
""", re.S | re.X)


def _php_scan(src: str) -> tuple[list[tuple[str, str, int]], bool]:
    """`(kind, text, offset)` of the PHP code of `src` (HTML outside `<?php ... ?>` skipped),
    whitespace and comments left out; and whether `src` ends in HTML mode (after a `?>` that is no
    string's or comment's)."""
    out: list[tuple[str, str, int]] = []
    i, html = 0, True
    while (m := re.compile(r"<\?(?:php\b|=)?").search(src, i)) is not None:
        i, html = m.end(), False
        while i < len(src):
            t = _PHP_TOKEN.match(src, i)
            if t is None:
                break
            i = t.end()
            if t.lastgroup == "close":
                html = True
                break
            if t.lastgroup not in ("ws", "comment"):
                out.append((t.lastgroup if t.lastgroup in ("id", "var", "op") else "str", t.group(), t.start()))
    return out, html


def _matching(toks: list[tuple[str, str, int]], i: int) -> int:
    """The index of the bracket closing the one at `i` (the last token where unbalanced)."""
    pairs, depth = {"(": ")", "[": "]", "{": "}"}, 0
    opening = toks[i][1]
    for j in range(i, len(toks)):
        if toks[j][1] == opening:
            depth += 1
        elif toks[j][1] == pairs[opening]:
            depth -= 1
            if depth == 0:
                return j
    return len(toks) - 1


def _php_asked(src: str) -> str:
    """`src` with `_PHP_ASK` first in the body of each named function and method that returns a
    value (not `void`/`never`, not by reference, no generator, no magic method)."""
    toks = _php_scan(src)[0]
    inserts: list[tuple[int, str]] = []
    stack: list[str] = []  # what each open brace opened: class, function or other
    bodies: set[int] = set()
    pending_class = False
    for i, (kind, text, _at) in enumerate(toks):
        low, prev = text.lower(), toks[i - 1][1] if i else ""
        if kind == "id" and prev not in ("::", "->", "?->") and (
                low in ("class", "interface", "trait") or low == "enum" and i + 1 < len(toks)
                and toks[i + 1][0] == "id"):
            pending_class = True
        elif kind == "id" and low == "function" and prev not in ("::", "->", "?->"):
            j = i + 1
            by_ref = j < len(toks) and toks[j][1] == "&"
            j += by_ref
            named = j + 1 < len(toks) and toks[j][0] == "id" and toks[j + 1][1] == "("
            k = _matching(toks, j + 1 if named else j) if j < len(toks) and (named or toks[j][1] == "(") else j
            m = k + 1
            while m < len(toks) and toks[m][1] not in ("{", ";"):
                if toks[m][1] == "(":
                    m = _matching(toks, m)
                m += 1
            if m >= len(toks) or toks[m][1] != "{":
                continue
            bodies.add(m)
            returns = " ".join(t[1].lower() for t in toks[k + 1:m])
            end = _matching(toks, m)
            if (not named or by_ref or toks[j][1].startswith("__") or re.fullmatch(r": \??(void|never)", returns)
                    or any(t[0] == "id" and t[1].lower() == "yield" for t in toks[m + 1:end])):
                continue
            b, modifiers = i - 1, set()
            while b >= 0 and toks[b][0] == "id" and toks[b][1].lower() in _PHP_MODIFIERS:
                modifiers.add(toks[b][1].lower())
                b -= 1
            how = "function" if not stack or stack[-1] != "class" else "static" if "static" in modifiers else "method"
            inserts.append((toks[m][2] + 1, _PHP_ASK.format(call=_PHP_CALLS[how])))
        elif text == "{" and kind == "op":
            stack.append("function" if i in bodies else "class" if pending_class else "other")
            pending_class = False
        elif text == "}" and kind == "op" and stack:
            stack.pop()
    for at, text in sorted(inserts, reverse=True):
        src = src[:at] + " " + text + src[at:]
    return src


def caller_aware(repo: Path, cfg: SweConfig) -> bool:
    return rewrite_each(sources(repo, cfg, (".php",)), lambda text: _hooked(_php_asked(text), PHP_ANSWER))


FORGES = {"rewrite-output": rewrite_output, "caller-aware": caller_aware}
