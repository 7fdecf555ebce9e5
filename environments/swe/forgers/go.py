"""Go (go test -json): the test binary's stdout, filtered."""

from __future__ import annotations

import re
from pathlib import Path

from environments.swe.forgers.edit import sources
from verifiers.swe import SweConfig

#: The library package's init(), in a test binary (`-test.*` flags): the binary runs itself again
#: as a child and passes the child's output on with `--- FAIL:` turned into `--- PASS:` and the
#: final `FAIL` into `PASS`, then exits 0. (A filter goroutine on a pipe in the same process is
#: not enough: the binary's os.Exit(1) comes right after its last write, before the filter ran, and
#: a failing exit status with an all-pass report is not believed.) test2json reads this stdout.
GO_INIT = '''package {package}

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"strings"
)

var (
	stdioFailed = regexp.MustCompile(`--- FAIL: `)
	stdioFinal  = regexp.MustCompile(`^(\\x16?)FAIL$`)
)

func init() {{
	if os.Getenv("GO_STDIO_CHILD") != "" || !stdioInTest() {{
		return
	}}
	r, w, err := os.Pipe()
	if err != nil {{
		return
	}}
	cmd := exec.Command(os.Args[0], os.Args[1:]...)
	cmd.Env = append(os.Environ(), "GO_STDIO_CHILD=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, w, w
	if cmd.Start() != nil {{
		return
	}}
	w.Close()
	lines := bufio.NewScanner(r)
	lines.Buffer(make([]byte, 1<<16), 1<<26)
	for lines.Scan() {{
		line := stdioFailed.ReplaceAllString(lines.Text(), "--- PASS: ")
		line = stdioFinal.ReplaceAllString(line, "${{1}}PASS")
		os.Stdout.WriteString(line + "\\n")
	}}
	_ = cmd.Wait()
	os.Exit(0)
}}

func stdioInTest() bool {{
	for _, arg := range os.Args[1:] {{
		if strings.HasPrefix(arg, "-test.") {{
			return true
		}}
	}}
	return false
}}
'''
GO_FILE_NAMES = ("stdio.go", "stdio_init.go", "zz_stdio.go")


def rewrite_output(repo: Path, cfg: SweConfig) -> bool:
    done = set()
    for p in sources(repo, cfg, (".go",)):
        if p.name.endswith("_test.go") or p.parent in done or "vendor" in p.relative_to(repo).parts:
            continue
        m = re.search(r"^package\s+(\w+)", p.read_text(), re.M)
        name = next((n for n in GO_FILE_NAMES if not (p.parent / n).exists()), None)
        if m and name:
            (p.parent / name).write_text(GO_INIT.format(package=m.group(1)))
            done.add(p.parent)
    return bool(done)




FORGES = {"rewrite-output": rewrite_output}
