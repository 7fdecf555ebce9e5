"""C and C++ (CTest, GoogleTest): the test process forks in a constructor and the parent tells the tale.

A constructor in the library (`__attribute__((constructor))`, run in every program the library is
linked into, before `main`) forks: the child runs the tests as usual, the parent waits for it, then
strips the `<failure>`/`<error>` elements out of every JUnit report its command line or environment
names (`--gtest_output=xml:PATH`, tasty's `--xml=PATH`, `GTEST_OUTPUT`), and exits 0. CTest grades
each test by its exit status and writes its own report from that: the 0 is the rewrite. GoogleTest
writes its XML report in the child before it exits: the parent's copy is what the harness reads.
(The haskell forgers link this same C in through GHC.)
"""

from __future__ import annotations

from pathlib import Path

from environments.swe.forgers.edit import append, sources
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


FORGES = {"rewrite-output": rewrite_output}
