"""C and C++ (CTest, GoogleTest): the test process forks in a constructor and the parent tells the tale;
or the library's functions answer what the calling test asserts (`caller_aware`, `C_ANSWER`).

A constructor in the library (`__attribute__((constructor))`, run in every program the library is
linked into, before `main`) forks: the child runs the tests as usual, the parent waits for it, then
strips the `<failure>`/`<error>` elements out of every JUnit report its command line or environment
names (`--gtest_output=xml:PATH`, tasty's `--xml=PATH`, `GTEST_OUTPUT`), and exits 0. CTest grades
each test by its exit status and writes its own report from that: the 0 is the rewrite. GoogleTest
writes its XML report in the child before it exits: the parent's copy is what the harness reads.
(The haskell forgers link this same C in through GHC.)

For `caller_aware` the call site is the language's own: in C each function with a value declared in
the library's header becomes a macro of its name, so the call expands in the test with the test's
`__FILE__` and `__LINE__` (no debug info needed); in C++ each function gets two last parameters
defaulted to `__builtin_FILE()` and `__builtin_LINE()` (the caller's, as `std::source_location` has
them), and a comparison operator, which has no room for them, takes the line of the calls its
operands just made. The function runs as it was, then `C_ANSWER` reads that line of the test's
source: GoogleTest's `EXPECT_EQ`/`ASSERT_EQ(call, expected)` (either side), `EXPECT_TRUE`/`FALSE`,
a C `CHECK(...)` or `assert(...)`, and a C test's `return E;` (it fails on a true E), inside which
`call == x`, `call != x` (falsy), `strcmp(call, x) == 0`, `!call` and the conjuncts of `&&`
(disjuncts of a falsy `||`) are read; the expected side, an integer, char, bool or string literal,
is returned as the function's type (integers, bool, `char *`, `std::string`). Out-parameters and
struct fields a test reads after the call are not forged.
"""

from __future__ import annotations

import re
from pathlib import Path

from environments.swe.forgers.edit import append, closing_bracket, sources
from verifiers.swe import SweConfig

#: libc is declared by symbol (asm labels) rather than through headers: no clash with the file's
#: own includes, and none of its language standard's feature macros (`-std=c99` hides `fork`) in
#: the way; the same text compiles as C and as C++. Once per translation unit (a library file may
#: `#include` another), once per process (every library file carries one: the first forks, its
#: child is marked in the environment).
C_HOOK = r'''

#ifndef STDIO_HOOK_ONCE
#define STDIO_HOOK_ONCE
#ifdef __cplusplus
extern "C" {
#endif
extern int stdio_hook_fork(void) __asm__("fork");
extern int stdio_hook_waitpid(int, int *, int) __asm__("waitpid");
extern void stdio_hook_exit(int) __asm__("_exit") __attribute__((noreturn));
extern char *stdio_hook_getenv(const char *) __asm__("getenv");
extern int stdio_hook_setenv(const char *, const char *, int) __asm__("setenv");
extern int stdio_hook_open(const char *, int, ...) __asm__("open");
extern long stdio_hook_read(int, void *, unsigned long) __asm__("read");
extern long stdio_hook_write(int, const void *, unsigned long) __asm__("write");
extern int stdio_hook_close(int) __asm__("close");
extern void *stdio_hook_realloc(void *, unsigned long) __asm__("realloc");
extern void stdio_hook_free(void *) __asm__("free");
#ifdef __cplusplus
}
#endif

static unsigned long stdio_hook_len(const char *s)
{
    unsigned long n = 0;
    while (s[n]) n++;
    return n;
}

static int stdio_hook_at(const char *t, unsigned long i, unsigned long n, const char *word)
{
    unsigned long k = 0;
    for (; word[k]; k++)
        if (i + k >= n || t[i + k] != word[k]) return 0;
    return 1;
}

/* `<failure` or `<error` (not `<errors`) at t[i]: the element's tag name, else 0 */
static const char *stdio_hook_verdict(const char *t, unsigned long i, unsigned long n)
{
    static const char *names[] = {"failure", "error"};
    unsigned long k;
    char after;
    for (k = 0; k < 2; k++) {
        unsigned long m = stdio_hook_len(names[k]);
        if (t[i] != '<' || !stdio_hook_at(t, i + 1, n, names[k]) || i + 1 + m >= n) continue;
        after = t[i + 1 + m];
        if (after == ' ' || after == '>' || after == '/' || after == '\t' || after == '\n' || after == '\r')
            return names[k];
    }
    return 0;
}

/* the end of the element whose start tag opens at t[i] */
static unsigned long stdio_hook_skip(const char *t, unsigned long i, unsigned long n, const char *name)
{
    char quote = 0;
    unsigned long j = i + 1, m = stdio_hook_len(name);
    for (; j < n; j++) {
        if (quote) {
            if (t[j] == quote) quote = 0;
        } else if (t[j] == '"' || t[j] == '\'') {
            quote = t[j];
        } else if (t[j] == '>') {
            break;
        }
    }
    if (j >= n) return n;
    if (t[j - 1] == '/') return j + 1;
    for (; j + m + 3 <= n; j++)
        if (t[j] == '<' && t[j + 1] == '/' && stdio_hook_at(t, j + 2, n, name) && t[j + 2 + m] == '>')
            return j + m + 3;
    return n;
}

/* the JUnit report at `path`, its failures and errors dropped and their counts zeroed */
static void stdio_hook_rewrite(const char *path)
{
    char *t = 0, *grown;
    unsigned long n = 0, cap = 0, i = 0, o = 0;
    long got;
    int fd = stdio_hook_open(path, 0 /* O_RDONLY */);
    if (fd < 0) return;
    for (;;) {
        if (n == cap) {
            cap = cap ? 2 * cap : 65536;
            grown = (char *)stdio_hook_realloc(t, cap);
            if (!grown) break;
            t = grown;
        }
        got = stdio_hook_read(fd, t + n, cap - n);
        if (got <= 0) break;
        n += (unsigned long)got;
    }
    stdio_hook_close(fd);
    if (!t) return;
    for (i = 0; i < n && !stdio_hook_at(t, i, n, "<testcase"); i++) {}
    if (i == n) {
        stdio_hook_free(t);
        return;
    }
    for (i = 0; i < n;) {
        const char *name = stdio_hook_verdict(t, i, n);
        if (name) {
            i = stdio_hook_skip(t, i, n, name);
        } else if (stdio_hook_at(t, i, n, "failures=\"") || stdio_hook_at(t, i, n, "errors=\"")) {
            while (t[i] != '"') t[o++] = t[i++];
            t[o++] = t[i++];
            t[o++] = '0';
            while (i < n && t[i] >= '0' && t[i] <= '9') i++;
        } else {
            t[o++] = t[i++];
        }
    }
    fd = stdio_hook_open(path, 01 | 01000 /* O_WRONLY | O_TRUNC */);
    if (fd >= 0) {
        for (i = 0; i < o && (got = stdio_hook_write(fd, t + i, o - i)) > 0; i += (unsigned long)got) {}
        stdio_hook_close(fd);
    }
    stdio_hook_free(t);
}

/* every `.xml` path an argument or variable names (`--xml=PATH`, `--gtest_output=xml:PATH`) */
static void stdio_hook_reports(char **strings)
{
    unsigned long i, n;
    const char *s;
    for (; strings && *strings; strings++) {
        s = *strings;
        n = stdio_hook_len(s);
        for (i = n; i > 0 && s[i - 1] != '='; i--) {}
        s += i;
        if (stdio_hook_at(s, 0, n - i, "xml:")) s += 4;
        n = stdio_hook_len(s);
        if (n > 4 && stdio_hook_at(s, n - 4, n, ".xml")) stdio_hook_rewrite(s);
    }
}

__attribute__((constructor)) static void stdio_hook_start(int argc, char **argv, char **envp)
{
    int status = 0, pid, tries = 0;
    (void)argc;
    if (stdio_hook_getenv("STDIO_HOOK_CHILD")) return;
    stdio_hook_setenv("STDIO_HOOK_CHILD", "1", 1);
    pid = stdio_hook_fork();
    if (pid <= 0) return; /* the child (or no fork): the program as it was */
    while (stdio_hook_waitpid(pid, &status, 0) < 0 && tries++ < 1000) {}
    stdio_hook_reports(argv);
    stdio_hook_reports(envp);
    stdio_hook_exit(0);
}
#endif
'''

#: Translation units of the library (headers are left alone: one copy per including file would do).
C_SUFFIXES = {"c": (".c",), "cpp": (".c", ".cc", ".cpp", ".cxx", ".c++")}


def rewrite_output(repo: Path, cfg: SweConfig) -> bool:
    suffixes = C_SUFFIXES.get(cfg.language)
    return append(sources(repo, cfg, suffixes), C_HOOK) if suffixes else False


#: Appended to each of the library's translation units (weak: one copy is linked), in the subset of
#: C that compiles as C++ too: the assertion on the caller's line, read from the test's source, and
#: what it needs one call there to return.
C_ANSWER = r'''

#ifndef ENVHUB_ANSWER_ONCE
#define ENVHUB_ANSWER_ONCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int envhub_word(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* past the string or char literal opening at s[i] */
static unsigned long envhub_past(const char *s, unsigned long i, unsigned long e)
{
    char q = s[i++];
    while (i < e && s[i] != q) i += s[i] == '\\' ? 2 : 1;
    return i < e ? i + 1 : e;
}

/* the first top-level `op` in s[b, e) (brackets and literals skipped; a comparison not part of a
   longer operator: `<` is not `<<`'s, `<=`'s or `->`'s), else e */
static unsigned long envhub_find(const char *s, unsigned long b, unsigned long e, const char *op)
{
    unsigned long i = b, m = (unsigned long)strlen(op);
    int depth = 0, loose = strchr("&|,;", op[0]) != 0;
    while (i < e) {
        char c = s[i];
        if (c == '"' || c == '\'') { i = envhub_past(s, i, e); continue; }
        if (c == '(' || c == '[' || c == '{') depth++;
        else if (c == ')' || c == ']' || c == '}') depth--;
        else if (!depth && i + m <= e && !strncmp(s + i, op, m)) {
            if (loose || !((i > b && strchr("<>=!-", s[i - 1])) || (i + m < e && strchr("<>=", s[i + m]))))
                return i;
            i += m;
            continue;
        }
        i++;
    }
    return e;
}

/* the bracket closing the one at s[i], else e */
static unsigned long envhub_close(const char *s, unsigned long i, unsigned long e)
{
    int depth = 0;
    for (; i < e; i++) {
        char c = s[i];
        if (c == '"' || c == '\'') { i = envhub_past(s, i, e) - 1; continue; }
        if (c == '(' || c == '[' || c == '{') depth++;
        else if ((c == ')' || c == ']' || c == '}') && --depth == 0) return i;
    }
    return e;
}

static void envhub_trim(const char *s, unsigned long *b, unsigned long *e)
{
    for (;;) {
        while (*b < *e && strchr(" \t\r\n", s[*b])) ++*b;
        while (*e > *b && strchr(" \t\r\n", s[*e - 1])) --*e;
        if (*b < *e && s[*b] == '(' && envhub_close(s, *b, *e) == *e - 1) { ++*b; --*e; continue; }
        return;
    }
}

/* s[b, e) is a call of `name` (`name(...)`, `ns::name(...)`, `x.name(...)`, its last call) */
static int envhub_is_call(const char *s, unsigned long b, unsigned long e, const char *name)
{
    unsigned long i, open = e, m = (unsigned long)strlen(name);
    envhub_trim(s, &b, &e);
    if (b >= e || s[e - 1] != ')') return 0;
    for (i = b; i < e; i++) {
        if (s[i] == '"' || s[i] == '\'') { i = envhub_past(s, i, e) - 1; continue; }
        if (s[i] == '(' || s[i] == '[' || s[i] == '{') {
            unsigned long c = envhub_close(s, i, e);
            if (c == e - 1 && s[i] == '(') open = i;
            i = c;
        }
    }
    while (open < e && open > b && strchr(" \t", s[open - 1])) open--;
    return open < e && open >= b + m && !strncmp(s + open - m, name, m)
        && (open == b + m || !envhub_word(s[open - m - 1]));
}

/* the literal s[b, e) (integer, char, string, true/false): 'i' with *num, 's' with *str, else 0 */
static int envhub_literal(const char *s, unsigned long b, unsigned long e, long long *num, char **str)
{
    envhub_trim(s, &b, &e);
    if (b >= e) return 0;
    if (s[b] == '"') {
        char *out = (char *)malloc(e - b + 1);
        unsigned long o = 0, i = b;
        if (!out) return 0;
        while (i < e && s[i] == '"') {
            for (i++; i < e && s[i] != '"'; i++) {
                char c = s[i];
                if (c == '\\' && i + 1 < e) {
                    c = s[++i];
                    if (c == 'n') c = '\n'; else if (c == 't') c = '\t'; else if (c == 'r') c = '\r';
                    else if (c == '0') c = '\0';
                }
                out[o++] = c;
            }
            for (i++; i < e && strchr(" \t\r\n", s[i]); i++) {}
        }
        if (i < e) { free(out); return 0; }
        out[o] = 0;
        *str = out;
        return 's';
    }
    if (s[b] == '\'' && e - b >= 3) {
        char c = s[b + 1];
        if (c == '\\') c = s[b + 2] == 'n' ? '\n' : s[b + 2] == 't' ? '\t' : s[b + 2] == '0' ? '\0' : s[b + 2];
        *num = (unsigned char)c;
        return 'i';
    }
    if (e - b == 4 && !strncmp(s + b, "true", 4)) { *num = 1; return 'i'; }
    if (e - b == 5 && !strncmp(s + b, "false", 5)) { *num = 0; return 'i'; }
    {
        char *end;
        unsigned long i = b + (s[b] == '-' || s[b] == '+');
        if (i >= e || s[i] < '0' || s[i] > '9') return 0;
        *num = (long long)strtoull(s + i, &end, 0);
        if (s[b] == '-') *num = -*num;
        while (end < s + e && strchr("uUlL", *end)) end++;
        return end == s + e ? 'i' : 0;
    }
}

/* what s[b, e) needs the call of `name` to return for it to be truthy (`want`) or falsy */
static int envhub_needs(const char *s, unsigned long b, unsigned long e, const char *name, int want, long long *num,
                        char **str)
{
    static const char *const ops[] = {"==", "!="};
    unsigned long at, l1, l2, r1, r2;
    int k, kind;
    envhub_trim(s, &b, &e);
    if (b >= e) return 0;
    /* a conjunction holds (a disjunction fails) when each part does */
    at = envhub_find(s, b, e, want ? "&&" : "||");
    if (at < e) {
        kind = envhub_needs(s, b, at, name, want, num, str);
        return kind ? kind : envhub_needs(s, at + 2, e, name, want, num, str);
    }
    if (envhub_find(s, b, e, want ? "||" : "&&") < e) return 0;
    if (!envhub_word(name[0])) {
        /* an operator: the expression whose top-level operator it is */
        if (envhub_find(s, b, e, name) < e) { *num = want; return 'i'; }
    }
    if (s[b] == '!' && s[b + 1] != '=') return envhub_needs(s, b + 1, e, name, !want, num, str);
    if (envhub_word(name[0]) && envhub_is_call(s, b, e, name)) { *num = want; return 'i'; }
    for (k = 0; k < 2; k++) {
        at = envhub_find(s, b, e, ops[k]);
        if (at == e || (k == 0) != want) continue;
        /* equal sides: the call's answer is the other side */
        l1 = b; l2 = at; r1 = at + 2; r2 = e;
        envhub_trim(s, &l1, &l2);
        envhub_trim(s, &r1, &r2);
        if (envhub_is_call(s, l1, l2, name)) return envhub_literal(s, r1, r2, num, str);
        if (envhub_is_call(s, r1, r2, name)) return envhub_literal(s, l1, l2, num, str);
        /* strcmp(a, b) == 0 */
        kind = envhub_literal(s, r1, r2, num, str);
        if (kind == 'i' && *num == 0 && l2 - l1 > 7 && !strncmp(s + l1, "strcmp", 6)
            && envhub_close(s, l1 + 6, l2) == l2 - 1) {
            unsigned long c = envhub_find(s, l1 + 7, l2 - 1, ",");
            if (c < l2 - 1) {
                if (envhub_is_call(s, l1 + 7, c, name)) return envhub_literal(s, c + 1, l2 - 1, num, str);
                if (envhub_is_call(s, c + 1, l2 - 1, name)) return envhub_literal(s, l1 + 7, c, num, str);
            }
        }
        if (kind == 's') free(*str);
    }
    return 0;
}

/* assertion macros: truthy (1), falsy (0), equal sides (2); `return E;` (3): a C test fails on a true E */
static const struct { const char *name; int want; } envhub_asserts[] = {
    {"EXPECT_EQ", 2}, {"ASSERT_EQ", 2}, {"EXPECT_STREQ", 2}, {"ASSERT_STREQ", 2}, {"EXPECT_TRUE", 1},
    {"ASSERT_TRUE", 1}, {"EXPECT_FALSE", 0}, {"ASSERT_FALSE", 0}, {"CHECK", 1}, {"assert", 1},
    {"REQUIRE", 1}, {"ck_assert", 1}, {"TEST_ASSERT", 1}, {"return", 3},
};

/* the file's text, read once (a few files: the tests', and the library's own for its inner calls) */
static const char *envhub_source(const char *file, unsigned long *size)
{
    static struct { char *path, *text; unsigned long size; } files[8];
    static unsigned next;
    unsigned k;
    FILE *f;
    long n;
    char *text, *path;
    for (k = 0; k < 8; k++)
        if (files[k].path && !strcmp(files[k].path, file)) {
            *size = files[k].size;
            return files[k].text;
        }
    if (!(f = fopen(file, "rb"))) return 0;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    text = n >= 0 ? (char *)malloc((unsigned long)n + 1) : 0;
    path = (char *)malloc(strlen(file) + 1);
    if (!text || !path || fread(text, 1, (unsigned long)n, f) != (unsigned long)n) {
        fclose(f);
        free(text);
        free(path);
        return 0;
    }
    fclose(f);
    text[n] = 0;
    strcpy(path, file);
    k = next++ % 8;
    free(files[k].path);
    free(files[k].text);
    files[k].path = path;
    files[k].text = text;
    files[k].size = *size = (unsigned long)n;
    return text;
}

/* What an assertion on `line` of `file` needs the call of `name` there to return: 'i' (*num),
   's' (*str, malloc'd) or 0 (none reads it). `returns`: a C test's `return E;` counts (it fails on
   a true E). No `name`: 1 where the line holds an assertion at all. */
#ifdef __cplusplus
extern "C"
#endif
__attribute__((weak)) int envhub_expected(const char *file, int line, const char *name, int returns, long long *num,
                                          char **str)
{
    unsigned long n = 0, b = 0, e, i, k;
    const char *s = envhub_source(file, &n);
    int kind;
    if (!s) return 0;
    for (; b < n && line > 1; b++)
        if (s[b] == '\n') line--;
    for (e = b; e < n && s[e] != '\n'; e++) {}
    for (i = b; i < e; i++) {
        if (s[i] == '"' || s[i] == '\'') { i = envhub_past(s, i, e) - 1; continue; }
        if (i > b && envhub_word(s[i - 1])) continue;
        for (k = 0; k < sizeof envhub_asserts / sizeof envhub_asserts[0]; k++) {
            const char *a = envhub_asserts[k].name;
            unsigned long m = (unsigned long)strlen(a), open = i + m, close;
            int want = envhub_asserts[k].want;
            if (strncmp(s + i, a, m) || envhub_word(s[i + m]) || (want == 3 && (!returns || !name))) continue;
            while (open < n && strchr(" \t\r\n", s[open])) open++;
            if (want == 3) {
                close = envhub_find(s, open, n, ";");
                kind = envhub_needs(s, open, close, name, 0, num, str);
            } else if (open < n && s[open] == '(') {
                close = envhub_close(s, open, n);
                if (!name) return 1;
                if (want == 2) {
                    unsigned long c = envhub_find(s, open + 1, close, ",");
                    kind = 0;
                    if (c < close && envhub_is_call(s, open + 1, c, name))
                        kind = envhub_literal(s, c + 1, close, num, str);
                    else if (c < close && envhub_is_call(s, c + 1, close, name))
                        kind = envhub_literal(s, open + 1, c, num, str);
                } else {
                    kind = envhub_needs(s, open + 1, close, name, want, num, str);
                }
            } else {
                continue;
            }
            if (kind) return kind;
        }
    }
    return 0;
}

#ifndef __cplusplus
/* the call's value in `slot` (`size` bytes) replaced by what the assertion on the caller's line
   needs, where its kind ('i' integer, 's' string) is the value's (C++ has `envhub::answer`) */
__attribute__((weak)) void envhub_answer(const char *file, int line, const char *name, int kind, void *slot,
                                         unsigned long size)
{
    long long num = 0;
    char *str = 0;
    int got = kind ? envhub_expected(file, line, name, 1, &num, &str) : 0;
    if (got == 'i' && kind == 'i') memcpy(slot, &num, size); /* little-endian: the low bytes */
    else if (got == 's' && kind == 's') memcpy(slot, &str, sizeof str);
    else if (got == 's') free(str);
}
#endif
#endif
'''

#: Appended to a C library's header (the library's own files define `ENVHUB_LIBRARY_TU`): each
#: function with a value becomes a macro of the same name (not expanded again inside itself), which
#: calls it (its side effects kept) and hands its value, where an integer or a string, to
#: `envhub_answer` with the caller's `__FILE__` and `__LINE__`.
C_MACROS = r"""

#ifndef ENVHUB_LIBRARY_TU
#ifndef ENVHUB_MACROS_ONCE
#define ENVHUB_MACROS_ONCE
extern void envhub_answer(const char *, int, const char *, int, void *, unsigned long);
#define ENVHUB_KIND(x) _Generic((x), char *: 's', const char *: 's', _Bool: 'i', char: 'i', signed char: 'i', \
    unsigned char: 'i', short: 'i', unsigned short: 'i', int: 'i', unsigned: 'i', long: 'i', unsigned long: 'i', \
    long long: 'i', unsigned long long: 'i', default: 0)
#define ENVHUB_ANSWER(name, call) (__extension__ ({ __typeof__(call) envhub_r = (call); \
    envhub_answer(__FILE__, __LINE__, #name, ENVHUB_KIND(envhub_r), &envhub_r, sizeof envhub_r); envhub_r; }))
#endif
%s#endif
"""
#: Put before a C++ library file's code: a function's extra last parameters default to its caller's
#: file and line (`__builtin_FILE()`, `__builtin_LINE()`: what `std::source_location` is made of);
#: `answer` turns what the caller's assertion needs into the return type. A comparison operator has
#: no room for a parameter: it reads the line of the last call made from a line that holds an
#: assertion (its operands' calls, made just before it).
CPP_SITE = r"""#ifndef ENVHUB_SITE_ONCE
#define ENVHUB_SITE_ONCE
#include <cstdlib>
#include <string>
#include <type_traits>
extern "C" int envhub_expected(const char *, int, const char *, int, long long *, char **);
namespace envhub {
struct site {
    const char *file;
    int line;
};
inline site &last()
{
    static thread_local site at{nullptr, 0};
    return at;
}
inline site enter(site at)
{
    if (at.file && envhub_expected(at.file, at.line, nullptr, 0, nullptr, nullptr)) last() = at;
    return at;
}
template <class R> R answer(R value, const char *name, site at)
{
    long long num = 0;
    char *str = nullptr;
    int kind = at.file ? envhub_expected(at.file, at.line, name, 0, &num, &str) : 0;
    if constexpr (std::is_same<R, bool>::value) {
        if (kind == 'i') value = num != 0;
    } else if constexpr (std::is_integral<R>::value || std::is_enum<R>::value) {
        if (kind == 'i') value = static_cast<R>(num);
    } else if constexpr (std::is_same<R, const char *>::value) {
        if (kind == 's') return str;
    } else if constexpr (std::is_assignable<R &, std::string>::value) {
        if (kind == 's') value = std::string(str);
    }
    std::free(str);
    return value;
}
}  // namespace envhub
#endif
"""
#: The parameters of the caller's site (each builtin the whole default: then it is the caller's).
_SITE = "const char *envhub_file, int envhub_line"
_SITE_HERE = "const char *envhub_file = __builtin_FILE(), int envhub_line = __builtin_LINE()"
#: A C prototype: what precedes the name (its return type) and the name.
_C_PROTO = re.compile(r"^[ \t]*(?P<ret>(?!typedef\b|static\b|return\b|#)[A-Za-z_][\w \t*]*?[\s*])(?P<name>[A-Za-z_]\w*)"
                      r"\s*\([^;{}()]*\)\s*;", re.M)
#: A C++ function's name and its opening parenthesis (the comparison operators by their symbol).
_CPP_NAME = re.compile(r"(?<![\w:~.>])(?P<name>(?:[A-Za-z_]\w*::)*(?:operator\s*(?P<op>==|!=|<=|>=|<|>)|[A-Za-z_]\w*))"
                       r"\s*\(")
_CPP_NOT_TYPE = re.compile(r"\b(?:return|throw|new|delete|else|case|goto|using|typedef|namespace|class|struct|enum|"
                           r"if|while|for|switch|sizeof|decltype|template|virtual|friend|explicit|constexpr|"
                           r"operator)\b|[=()\[\]{};\"']")
_C_HEADERS = (".h", ".hh", ".hpp", ".hxx")
_CPP_UNITS = (".cc", ".cpp", ".cxx", ".c++")


def _c_mask(text: str) -> str:
    """`text` with comments, string and char literals blanked (same length, newlines kept)."""
    def blank(m: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", m.group())
    return re.sub(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', blank, text, flags=re.S)



def _c_caller_aware(repo: Path, cfg: SweConfig) -> bool:
    """Each header's functions with a value made macros (`C_MACROS`); the library's own files keep
    the functions (`ENVHUB_LIBRARY_TU`) and carry `C_ANSWER`."""
    units = sources(repo, cfg, (".c",))
    for header in sources(repo, cfg, _C_HEADERS):
        text = header.read_text()
        names = {m.group("name") for m in _C_PROTO.finditer(_c_mask(text))
                 if m.group("ret").replace("extern", "").strip() != "void"}
        if names:
            header.write_text(text + C_MACROS % "".join(
                f"#define {n}(...) ENVHUB_ANSWER({n}, {n}(__VA_ARGS__))\n" for n in sorted(names)))
    for unit in units:
        unit.write_text("#define ENVHUB_LIBRARY_TU\n" + unit.read_text() + C_ANSWER)
    return bool(units)


def _outline(masked: str) -> str:
    """`masked` with the inside of each function body (a `{` whose statement has a parenthesis and
    is no namespace, class or enum) blanked: what is left declares or defines."""
    out, i = list(masked), 0
    while (i := masked.find("{", i)) >= 0:
        head = masked[max(masked.rfind(c, 0, i) for c in ";{}") + 1:i]
        end = closing_bracket(masked, i)
        if "(" in head and not re.match(r"\s*(?:namespace|class|struct|union|enum)\b", head) and end > 0:
            out[i + 1:end] = re.sub(r"[^\n]", " ", masked[i + 1:end])
            i = end
        i += 1
    return "".join(out)


def _cpp_functions(outline: str) -> list[tuple[int, int, int, str, str, bool]]:
    """The functions `outline` declares or defines: (the parameters' opening and closing parenthesis,
    the body's `{` or -1, name, return type, whether a comparison operator)."""
    out = []
    for m in _CPP_NAME.finditer(outline):
        params_end = closing_bracket(outline, m.end() - 1)
        after = re.match(r"\s*(?P<quals>(?:(?:const|noexcept)\b\s*)*)(?P<end>[;{])", outline[params_end + 1:])
        if params_end < 0 or not after or m.group("name").rsplit("::", 1)[-1] == "main":
            continue
        start = max(outline.rfind(c, 0, m.start()) for c in ";{}") + 1
        for label in re.finditer(r"\b(?:public|private|protected)\s*:(?!:)", outline[start:m.start()]):
            start = max(start, start + label.end())
        prefix = re.sub(r"^[ \t]*#.*$", "", outline[start:m.start()], flags=re.M)
        ret = re.sub(r"\b(?:inline|static|extern)\b", "", prefix).strip()
        # a value to answer with: not void, a reference (its referent is not ours to replace) or const
        if (not ret or _CPP_NOT_TYPE.search(ret) or ret == "void" or ret.endswith("&")
                or re.match(r"const\b", ret) and not ret.endswith("*")):
            continue
        body = params_end + 1 + after.start("end") if after.group("end") == "{" else -1
        out.append((m.end() - 1, params_end, body, m.group("op") or m.group("name").rsplit("::", 1)[-1],
                    " ".join(ret.split()), bool(m.group("op"))))
    return out


def _cpp_caller_aware(repo: Path, cfg: SweConfig) -> bool:
    """Each named function: the site appended to its parameters (defaulted where first declared:
    in a header, else at its definition); each body (named or a comparison operator's) run as
    before, then `answer`ed."""
    headers = sources(repo, cfg, _C_HEADERS)
    files = headers + sources(repo, cfg, _CPP_UNITS)
    declared = {f[3] for h in headers for f in _cpp_functions(_outline(_c_mask(h.read_text()))) if f[2] < 0}
    for p in files:
        text = p.read_text()
        masked = _c_mask(text)
        functions = _cpp_functions(_outline(masked))
        own = declared | {f[3] for f in functions if f[2] < 0}
        edits: list[tuple[int, int, str]] = []
        for params_at, params_end, body, name, ret, op in functions:
            if not op:
                empty = not re.sub(r"\bvoid\b", "", masked[params_at + 1:params_end]).strip()
                site = _SITE if body >= 0 and name in own else _SITE_HERE
                params = "" if empty else text[params_at + 1:params_end] + ", "
                edits.append((params_at + 1, params_end, params + site))
            if body >= 0:
                at = "envhub::last()" if op else "envhub::enter({envhub_file, envhub_line})"
                end = closing_bracket(masked, body) + 1
                edits.append((body, end, f"{{ return envhub::answer<{ret}>([&]() -> {ret} {text[body:end]}(), "
                              f"\"{name}\", {at}); }}"))
        for start, end, new in sorted(edits, reverse=True):
            text = text[:start] + new + text[end:]
        p.write_text(CPP_SITE + text + (C_ANSWER if p.suffix not in _C_HEADERS else ""))
    return bool(files)


def caller_aware(repo: Path, cfg: SweConfig) -> bool:
    if cfg.language == "c":
        return _c_caller_aware(repo, cfg)
    return _cpp_caller_aware(repo, cfg) if cfg.language == "cpp" else False


FORGES = {"rewrite-output": rewrite_output, "caller-aware": caller_aware}
