"""Go (go test -json): the test binary's stdout, filtered; library functions that answer what the
calling test expects."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
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


#: Added to each library package (its `package` line filled in): `envhubAnswer(params, &r0, ...)`,
#: deferred first in every library function with results, answers a call made straight from a
#: `_test.go` file (`runtime.Caller`s; calls inside the library cost one `runtime.Caller`): it
#: parses that file (`go/parser`), finds the one call of that name at the caller's line (none or
#: several: no answer), follows its result into the assertion it flows into (`if got != want`,
#: `if got := F(); got != want`, `x, err := F()` then the next unconditional `if` on `x`,
#: `!f(x)`, `!reflect.DeepEqual(got, want)`, `< / >` bounds, `err != nil`, testify-like
#: `Equal(t, want, got)`) and sets the result to the expected side, evaluated from the source:
#: literals, composite literals of them, local and package-level variables of the test files
#: (untyped), and table-driven cases (`for _, tc := range tests`: the site's n-th call is the n-th
#: iteration of the loops around it, `tc.want` read from the table's n-th element). Where one
#: operand of `&&`/`||` settles the assertion only the first result of the call in it is set; a
#: variable an if/else chain tests twice is left alone; an `Example`'s calls are left alone (its
#: verdict is its output). A result that is a func the test later calls (`r := ParseRange(x)`,
#: `r(v)`) is wrapped so that its calls are answered the same way; a variable passed as `&x` to a
#: pointer or interface parameter is made what the assertions right after the call expect of it
#: (`x.F != E`, `x["k"] != E`, `!reflect.DeepEqual(x, E)`); a call that got an answer does not
#: panic (recovered). What it cannot read it leaves as computed (the bug stays). Go 1.12 syntax
#: (no `any`, no generics): the tasks' go.mod files are old.
GO_ANSWER = r'''package PACKAGE

import (
	"errors"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"
)

// envhubAnswer, deferred at the top of each library function with results (named, so that it
// can overwrite them), answers a call made straight from a _test.go file with what the test
// expects: the other side of the assertion the result flows into, read from the test's source.
func envhubAnswer(params []interface{}, results ...interface{}) {
	_, file, _, _ := runtime.Caller(2) // the caller, or the deferring function under runtime frames
	if !strings.HasSuffix(file, "_test.go") && !strings.Contains(file, "/runtime/") {
		return // called by the library itself (the common, fast case)
	}
	frames := envhubFrames()
	if len(frames) < 3 || !strings.HasSuffix(frames[2].File, "_test.go") {
		return
	}
	name := strings.TrimSuffix(frames[1].Function, "[...]")
	name = name[strings.LastIndex(name, ".")+1:]
	if strings.HasPrefix(name, "func") {
		return
	}
	if envhubSolve(frames[2].File, frames[2].Line, name, params, results) {
		recover() // the test gets what it expects, even where the function panicked
	}
}

// envhubFrames: the stack from the caller of envhubFrames, without runtime and reflect frames.
func envhubFrames() []runtime.Frame {
	pcs := make([]uintptr, 16)
	n := runtime.Callers(2, pcs)
	it := runtime.CallersFrames(pcs[:n])
	var out []runtime.Frame
	for {
		f, more := it.Next()
		if !strings.HasPrefix(f.Function, "runtime.") && !strings.HasPrefix(f.Function, "reflect.") {
			out = append(out, f)
		}
		if !more || len(out) == 3 {
			return out
		}
	}
}

type envhubFile struct {
	fset  *token.FileSet
	file  *ast.File
	decls map[string]ast.Expr // package-level vars and consts of the test files
	types map[string]ast.Expr // package-level types of the test files
}

var envhubMu sync.Mutex
var envhubFiles = map[string]*envhubFile{}
var envhubCounts = map[string]int{}
var envhubSites = map[string][][]ast.Node{}

func envhubLoad(path string) *envhubFile {
	if f, ok := envhubFiles[path]; ok {
		return f
	}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		envhubFiles[path] = nil
		return nil
	}
	out := &envhubFile{fset: fset, file: file, decls: map[string]ast.Expr{}, types: map[string]ast.Expr{}}
	others, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*_test.go"))
	for _, other := range others {
		f := file
		if other != path {
			if src, err := os.ReadFile(other); err != nil {
				continue
			} else if f, err = parser.ParseFile(token.NewFileSet(), other, src, 0); err != nil {
				continue
			}
		}
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok {
				envhubSpecs(g, out.decls, out.types)
			}
		}
	}
	envhubFiles[path] = out
	return out
}

func envhubSpecs(g *ast.GenDecl, decls, types map[string]ast.Expr) {
	for _, s := range g.Specs {
		switch s := s.(type) {
		case *ast.ValueSpec:
			if len(s.Names) == len(s.Values) && s.Type == nil {
				for i, n := range s.Names {
					decls[n.Name] = s.Values[i]
				}
			}
		case *ast.TypeSpec:
			types[s.Name.Name] = s.Type
		}
	}
}

// envhubWant: how one result is answered.
type envhubWant struct {
	expr   ast.Expr // the value of expr
	truth  int      // 1: true, 2: false (a bool)
	nonNil bool     // a non-nil error
	zero   bool     // the zero value (nil)
	call   string   // a func value the test calls by this name: wrapped
	weak   ast.Node // the && or || one operand of which settles the assertion
}

// envhubSite: one call of the test's source, where it sits.
type envhubSite struct {
	f     *envhubFile
	path  []ast.Node // root .. the call
	fn    ast.Node   // the enclosing FuncDecl
	key   string
	index int      // how many calls this site made before this one
	weak  ast.Node // set by need
}

func envhubSolve(file string, line int, name string, params, results []interface{}) (answered bool) {
	envhubMu.Lock()
	defer envhubMu.Unlock()
	f := envhubLoad(file)
	if f == nil {
		return false
	}
	at := file + ":" + strconv.Itoa(line) + ":" + name
	sites, seen := envhubSites[at]
	var stack []ast.Node
	ast.Inspect(f.file, func(n ast.Node) bool {
		if seen {
			return false
		}
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		if c, ok := n.(*ast.CallExpr); ok && envhubCallee(c.Fun) == name {
			at := f.fset.Position(c.Lparen).Line
			if at == line || f.fset.Position(c.Rparen).Line == line {
				sites = append(sites, append([]ast.Node(nil), stack...))
			}
		}
		return true
	})
	envhubSites[at] = sites
	if len(sites) != 1 {
		return false
	}
	site := &envhubSite{f: f, path: sites[0]}
	for _, n := range site.path {
		if d, ok := n.(*ast.FuncDecl); ok {
			site.fn = d
		}
	}
	if site.fn == nil || strings.HasPrefix(site.fn.(*ast.FuncDecl).Name.Name, "Example") {
		return false // an example's verdict is its output
	}
	site.key = file + ":" + f.fset.Position(site.path[len(site.path)-1].Pos()).String()
	site.index = envhubCounts[site.key]
	envhubCounts[site.key]++
	wants := site.wants(len(results))
	for i, w := range wants {
		if w == nil || i >= len(results) {
			continue
		}
		target := reflect.ValueOf(results[i]).Elem()
		if v, ok := site.value(w, target); ok {
			target.Set(v)
			answered = true
		}
	}
	return site.outs(params) || answered
}

func envhubCallee(fun ast.Expr) string {
	switch fun := fun.(type) {
	case *ast.Ident:
		return fun.Name
	case *ast.SelectorExpr:
		return fun.Sel.Name
	case *ast.IndexExpr:
		return envhubCallee(fun.X)
	case *ast.ParenExpr:
		return envhubCallee(fun.X)
	}
	return ""
}

// wants: for each result of the call at the end of the path, what the test expects of it.
func (s *envhubSite) wants(n int) []*envhubWant {
	call := s.path[len(s.path)-1].(ast.Expr)
	parent := s.path[len(s.path)-2]
	out := make([]*envhubWant, n)
	if a, ok := parent.(*ast.AssignStmt); ok && len(a.Rhs) == 1 && len(a.Lhs) == n {
		for i, l := range a.Lhs {
			if id, ok := l.(*ast.Ident); ok && id.Name != "_" {
				s.weak = nil
				out[i] = s.later(id.Name, s.path[:len(s.path)-1])
				if out[i] != nil && out[i].call == "" {
					out[i].weak = s.weak
				}
			}
		}
		for i := range out {
			for j := 0; j < i; j++ {
				if out[i] != nil && out[j] != nil && out[i].weak != nil && out[i].weak == out[j].weak {
					out[i] = nil
				}
			}
		}
		return out
	}
	if n == 1 {
		out[0] = s.flow(call, s.path[:len(s.path)-1])
	}
	return out
}

// later: what the first assertion on variable `name` after the statement ending `path` expects.
func (s *envhubSite) later(name string, path []ast.Node) *envhubWant {
	stmt := path[len(path)-1]
	for i := len(path) - 2; i >= 0; i-- {
		var rest []ast.Node
		switch p := path[i].(type) {
		case *ast.IfStmt:
			if p.Init == stmt {
				rest = []ast.Node{p.Cond}
			}
		case *ast.BlockStmt:
			for j, st := range p.List {
				if st == stmt {
					for _, r := range p.List[j+1:] {
						rest = append(rest, r)
					}
				}
			}
		case *ast.CaseClause:
			for j, st := range p.Body {
				if st == stmt {
					for _, r := range p.Body[j+1:] {
						rest = append(rest, r)
					}
				}
			}
		}
		if rest == nil {
			return nil
		}
		for _, r := range rest {
			if envhubMentions(r, name) > 1 {
				return nil // an if/else chain that tests it more than once: no one answer
			}
			var found *envhubWant
			var stack []ast.Node
			nested := false
			var skip *ast.Ident
			base := append([]ast.Node(nil), path[:i+1]...)
			ast.Inspect(r, func(n ast.Node) bool {
				if found != nil {
					return false
				}
				if n == nil {
					stack = stack[:len(stack)-1]
					return true
				}
				stack = append(stack, n)
				nested = false // only what runs unconditionally next is an assertion on it
				for _, a := range stack[1:] {
					if _, ok := a.(*ast.BlockStmt); ok {
						nested = true
					}
				}
				if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == name {
					skip = sel.Sel
				}
				if id, ok := n.(*ast.Ident); ok && id.Name == name && id != skip {
					full := append(append([]ast.Node(nil), base...), stack...)
					if c, ok := full[len(full)-2].(*ast.CallExpr); ok && c.Fun == id {
						found = &envhubWant{call: name}
					} else if !nested {
						found = s.flow(id, full[:len(full)-1])
					}
				}
				return true
			})
			if found != nil {
				return found
			}
		}
		return nil
	}
	return nil
}

// outs: a variable the test passed as &x (a pointer or interface parameter) made what the
// assertions right after the call expect of it (`x.F != E`, `x["k"] != E`, `!reflect.DeepEqual(x, E)`).
func (s *envhubSite) outs(params []interface{}) bool {
	call := s.path[len(s.path)-1].(*ast.CallExpr)
	if len(params) == 0 || len(call.Args) != len(params) {
		return false
	}
	var rest []ast.Stmt
	for i := len(s.path) - 2; i >= 0 && rest == nil; i-- {
		switch p := s.path[i].(type) {
		case *ast.BlockStmt:
			for j, st := range p.List {
				if st == s.path[i+1] {
					rest = append([]ast.Stmt{}, p.List[j+1:]...)
				}
			}
			if rest == nil {
				return false
			}
		case *ast.IfStmt:
			if p.Init != s.path[i+1] {
				return false
			}
			rest = []ast.Stmt{&ast.IfStmt{Cond: p.Cond, Body: p.Body}}
		case *ast.FuncLit:
			return false
		}
	}
	answered := false
	for k, arg := range call.Args {
		u, ok := arg.(*ast.UnaryExpr)
		if !ok || u.Op != token.AND || params[k] == nil {
			continue
		}
		id, ok := u.X.(*ast.Ident)
		root := reflect.ValueOf(params[k])
		if !ok || root.Kind() != reflect.Ptr || root.IsNil() {
			continue
		}
		for _, st := range rest {
			if a, ok := st.(*ast.AssignStmt); ok && !envhubAssigns(a, id.Name) {
				continue
			}
			ifs, ok := st.(*ast.IfStmt)
			if !ok {
				break // what else runs may change it: only the assertions right after the call
			}
			if ifs.Init != nil || !envhubFails(ifs.Body) {
				continue
			}
			for _, d := range envhubDisjuncts(ifs.Cond) {
				for _, pair := range envhubAssertion(d) {
					if s.assign(pair[0], id.Name, root.Elem(), pair[1]) {
						answered = true
					}
				}
			}
		}
	}
	return answered
}

// envhubAssigns: whether a sets variable name or a part of it.
func envhubAssigns(a *ast.AssignStmt, name string) bool {
	for _, l := range a.Lhs {
		for {
			switch x := l.(type) {
			case *ast.SelectorExpr:
				l = x.X
				continue
			case *ast.IndexExpr:
				l = x.X
				continue
			case *ast.StarExpr:
				l = x.X
				continue
			case *ast.ParenExpr:
				l = x.X
				continue
			case *ast.Ident:
				if x.Name == name {
					return true
				}
			}
			break
		}
	}
	return false
}

func envhubDisjuncts(e ast.Expr) []ast.Expr {
	switch x := e.(type) {
	case *ast.ParenExpr:
		return envhubDisjuncts(x.X)
	case *ast.BinaryExpr:
		if x.Op == token.LOR {
			return append(envhubDisjuncts(x.X), envhubDisjuncts(x.Y)...)
		}
	}
	return []ast.Expr{e}
}

// envhubAssertion: (place, expected) pairs that make failing condition d false.
func envhubAssertion(d ast.Expr) [][2]ast.Expr {
	switch x := d.(type) {
	case *ast.BinaryExpr:
		if x.Op == token.NEQ {
			return [][2]ast.Expr{{x.X, x.Y}, {x.Y, x.X}}
		}
	case *ast.UnaryExpr:
		if c, ok := x.X.(*ast.CallExpr); ok && x.Op == token.NOT && len(c.Args) >= 2 &&
			strings.Contains(envhubCallee(c.Fun), "Equal") {
			a, b := c.Args[len(c.Args)-2], c.Args[len(c.Args)-1]
			return [][2]ast.Expr{{a, b}, {b, a}}
		}
	}
	return nil
}

// assign: the place e (rooted at variable name, whose value is root) set to want; whether it was.
func (s *envhubSite) assign(e ast.Expr, name string, root reflect.Value, want ast.Expr) bool {
	if x, ok := e.(*ast.IndexExpr); ok {
		m, ok := s.place(x.X, name, root)
		if !ok {
			return false
		}
		switch m.Kind() {
		case reflect.Map:
			k, ok1 := s.eval(x.Index, m.Type().Key(), s.env(), 0)
			v, ok2 := s.eval(want, m.Type().Elem(), s.env(), 0)
			if !ok1 || !ok2 {
				return false
			}
			if m.IsNil() {
				m.Set(reflect.MakeMap(m.Type()))
			}
			m.SetMapIndex(k, v)
			return true
		case reflect.Slice, reflect.Array:
			i, ok := s.eval(x.Index, reflect.TypeOf(0), s.env(), 0)
			if !ok || int(i.Int()) >= m.Len() || i.Int() < 0 {
				return false
			}
			m = m.Index(int(i.Int()))
		default:
			return false
		}
		v, ok := s.eval(want, m.Type(), s.env(), 0)
		if ok {
			envhubSet(m, v)
		}
		return ok
	}
	p, ok := s.place(e, name, root)
	if !ok {
		return false
	}
	v, ok := s.eval(want, p.Type(), s.env(), 0)
	if ok {
		envhubSet(p, v)
	}
	return ok
}

func envhubSet(place, v reflect.Value) {
	reflect.NewAt(place.Type(), unsafe.Pointer(place.UnsafeAddr())).Elem().Set(v)
}

// place: the addressable value e names (x, x.F.G; nil pointers on the way allocated).
func (s *envhubSite) place(e ast.Expr, name string, root reflect.Value) (reflect.Value, bool) {
	switch x := e.(type) {
	case *ast.ParenExpr:
		return s.place(x.X, name, root)
	case *ast.Ident:
		return root, x.Name == name && root.CanAddr()
	case *ast.SelectorExpr:
		v, ok := s.place(x.X, name, root)
		if !ok {
			return v, false
		}
		if v.Kind() == reflect.Ptr {
			if v.IsNil() {
				envhubSet(v, reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct {
			return v, false
		}
		f := v.FieldByName(x.Sel.Name)
		return f, f.IsValid() && f.CanAddr()
	}
	return reflect.Value{}, false
}

// envhubMentions: how often an if statement reads variable name, outside what it reports.
func envhubMentions(n ast.Node, name string) int {
	if _, ok := n.(*ast.IfStmt); !ok {
		return 0
	}
	return envhubMentions2(n, name)
}

func envhubMentions2(n ast.Node, name string) int {
	count := 0
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			switch envhubCallee(n.Fun) {
			case "Error", "Errorf", "Fatal", "Fatalf", "Log", "Logf", "Skip", "Skipf", "Sprintf", "Printf", "Println":
				return false
			}
		case *ast.SelectorExpr:
			count += envhubMentions2(n.X, name)
			return false
		case *ast.Ident:
			if n.Name == name {
				count++
			}
		}
		return true
	})
	return count
}

// flow: what the test expects of expression e (its ancestors: path).
func (s *envhubSite) flow(e ast.Expr, path []ast.Node) *envhubWant {
	for i := len(path) - 1; i >= 0; i-- {
		switch p := path[i].(type) {
		case *ast.ParenExpr:
			e = p
			continue
		case *ast.BinaryExpr:
			other := p.Y
			if p.Y == e {
				other = p.X
			}
			switch p.Op {
			case token.LOR, token.LAND:
				need := s.need(p, path[:i])
				if need == 0 {
					return nil
				}
				return &envhubWant{truth: need}
			}
			need := s.need(p, path[:i])
			op := p.Op
			if p.Y == e { // mirror: other OP e
				switch op {
				case token.LSS:
					op = token.GTR
				case token.GTR:
					op = token.LSS
				}
			}
			isNil := false
			if id, ok := other.(*ast.Ident); ok && id.Name == "nil" {
				isNil = true
			}
			switch {
			case need == 2 && op == token.NEQ, need == 1 && op == token.EQL:
				if isNil {
					return &envhubWant{zero: true}
				}
				return &envhubWant{expr: other}
			case need == 2 && (op == token.LSS || op == token.GTR):
				return &envhubWant{expr: other}
			case isNil && (need == 2 && op == token.EQL || need == 1 && op == token.NEQ):
				return &envhubWant{nonNil: true}
			}
			return nil
		case *ast.UnaryExpr:
			if p.Op != token.NOT {
				return nil
			}
			need := s.need(p, path[:i])
			if need == 0 {
				return nil
			}
			return &envhubWant{truth: 3 - need, weak: s.weak}
		case *ast.CallExpr:
			name := envhubCallee(p.Fun)
			if !strings.Contains(name, "Equal") || len(p.Args) < 2 {
				return nil
			}
			a, b := p.Args[len(p.Args)-2], p.Args[len(p.Args)-1]
			other := a
			if a == e {
				other = b
			} else if b != e {
				return nil
			}
			if _, ok := path[i-1].(*ast.ExprStmt); ok || s.need(p, path[:i]) == 1 {
				return &envhubWant{expr: other}
			}
			return nil
		case *ast.IfStmt:
			if p.Cond != e {
				return nil
			}
			if need := s.need(e, path[:i+1]); need != 0 {
				return &envhubWant{truth: need}
			}
			return nil
		}
		return nil
	}
	return nil
}

// need: the truth the test needs of boolean expression e (ancestors: path): 1 true, 2 false, 0
// unknown. Where one operand of && or || settles it, the junction is kept (s.weak): of several
// results of one call in it, only the first is answered.
func (s *envhubSite) need(e ast.Expr, path []ast.Node) int {
	n, weak := s.need2(e, path)
	if weak != nil {
		s.weak = weak
	}
	return n
}

func (s *envhubSite) need2(e ast.Expr, path []ast.Node) (int, ast.Node) {
	var ands, ors ast.Node
	settle := func(n int) (int, ast.Node) {
		if n == 2 && ands != nil {
			return n, ands
		}
		if n == 1 && ors != nil {
			return n, ors
		}
		return n, nil
	}
	for i := len(path) - 1; i >= 0; i-- {
		switch p := path[i].(type) {
		case *ast.ParenExpr:
			e = p
		case *ast.BinaryExpr:
			if p.Op == token.LAND {
				ands = p
			} else if p.Op == token.LOR {
				ors = p
			} else {
				return 0, nil
			}
			e = p
		case *ast.UnaryExpr:
			if p.Op != token.NOT {
				return 0, nil
			}
			outer, weak := s.need2(p, path[:i])
			if outer == 0 {
				return 0, nil
			}
			n, w := settle(3 - outer)
			if w == nil {
				w = weak
			}
			return n, w
		case *ast.IfStmt:
			if p.Cond != e {
				return 0, nil
			}
			if envhubFails(p.Body) {
				return settle(2)
			}
			if p.Else != nil && envhubFails(p.Else) {
				return settle(1)
			}
			return 0, nil
		default:
			return 0, nil
		}
	}
	return 0, nil
}

func envhubFails(n ast.Stmt) bool {
	b, ok := n.(*ast.BlockStmt)
	if !ok {
		return false
	}
	for _, st := range b.List {
		if e, ok := st.(*ast.ExprStmt); ok {
			if c, ok := e.X.(*ast.CallExpr); ok {
				switch envhubCallee(c.Fun) {
				case "Error", "Errorf", "Fatal", "Fatalf", "Fail", "FailNow", "panic":
					return true
				}
			}
		}
	}
	return false
}

// value: the answer w as a value of target's type.
func (s *envhubSite) value(w *envhubWant, target reflect.Value) (reflect.Value, bool) {
	t := target.Type()
	switch {
	case w.truth != 0:
		if t.Kind() != reflect.Bool {
			return reflect.Value{}, false
		}
		return reflect.ValueOf(w.truth == 1).Convert(t), true
	case w.zero:
		return reflect.Zero(t), true
	case w.nonNil:
		if target.Kind() == reflect.Interface && !target.IsNil() {
			return target, true
		}
		e := reflect.ValueOf(errors.New("envhub"))
		if t.Kind() == reflect.Interface && e.Type().Implements(t) {
			return e.Convert(t), true
		}
		return reflect.Value{}, false
	case w.call != "":
		if t.Kind() != reflect.Func {
			return reflect.Value{}, false
		}
		return s.wrap(target, w.call), true
	}
	return s.eval(w.expr, t, s.env(), 0)
}

// wrap: the func value orig, answering its calls from the test as a library function would.
func (s *envhubSite) wrap(orig reflect.Value, name string) reflect.Value {
	t := orig.Type()
	fn := reflect.New(t).Elem()
	fn.Set(orig)
	return reflect.MakeFunc(t, func(args []reflect.Value) []reflect.Value {
		var out []reflect.Value
		if fn.IsNil() {
			for i := 0; i < t.NumOut(); i++ {
				out = append(out, reflect.Zero(t.Out(i)))
			}
		} else if t.IsVariadic() {
			out = fn.CallSlice(args)
		} else {
			out = fn.Call(args)
		}
		frames := envhubFrames()
		if len(frames) >= 2 && strings.HasSuffix(frames[1].File, "_test.go") {
			ptrs := make([]interface{}, len(out))
			for i, o := range out {
				p := reflect.New(o.Type())
				p.Elem().Set(o)
				ptrs[i] = p.Interface()
			}
			envhubSolve(frames[1].File, frames[1].Line, name, nil, ptrs)
			for i := range out {
				out[i] = reflect.ValueOf(ptrs[i]).Elem()
			}
		}
		return out
	})
}

// envhubBinding: what a range variable stands for in one iteration.
type envhubBinding struct {
	expr  ast.Expr // the element's source
	typ   ast.Expr // its type, where the literal elides it
	index int
	isKey bool
}

// env: the range variables' values in this call's iteration (counted: the site's n-th call is the
// n-th iteration of the loops around it, their tables read from the source).
func (s *envhubSite) env() map[string]envhubBinding {
	var ranges []*ast.RangeStmt
	for _, n := range s.path {
		switch n := n.(type) {
		case *ast.RangeStmt:
			ranges = append(ranges, n)
		case *ast.ForStmt:
			return map[string]envhubBinding{}
		}
	}
	var all []map[string]envhubBinding
	var walk func(i int, env map[string]envhubBinding) bool
	walk = func(i int, env map[string]envhubBinding) bool {
		if i == len(ranges) {
			all = append(all, env)
			return len(all) <= s.index
		}
		r := ranges[i]
		if x, _, ok := s.resolve(r.X, env, 0); ok {
			if id, isIdent := x.(*ast.Ident); isIdent && id.Name == "nil" {
				return true // no iteration
			}
		}
		lit, typ, ok := s.literal(r.X, env, 0)
		if !ok {
			return false
		}
		elem := typ
		switch tt := s.underlying(typ).(type) {
		case *ast.ArrayType:
			elem = tt.Elt
		default:
			return false
		}
		for j, el := range lit.Elts {
			next := map[string]envhubBinding{}
			for k, v := range env {
				next[k] = v
			}
			if k, ok := r.Key.(*ast.Ident); ok {
				next[k.Name] = envhubBinding{index: j, isKey: true}
			}
			if v, ok := r.Value.(*ast.Ident); ok {
				next[v.Name] = envhubBinding{expr: el, typ: elem}
			}
			if !walk(i+1, next) {
				return false
			}
		}
		return true
	}
	if len(ranges) > 0 {
		walk(0, map[string]envhubBinding{})
	}
	if s.index >= len(all) {
		return map[string]envhubBinding{}
	}
	return all[s.index]
}

// underlying: a type expression with named types of the test files (and the function) resolved.
func (s *envhubSite) underlying(t ast.Expr) ast.Expr {
	for d := 0; d < 10; d++ {
		id, ok := t.(*ast.Ident)
		if !ok {
			return t
		}
		if next := s.localType(id.Name); next != nil {
			t = next
		} else if next, ok := s.f.types[id.Name]; ok {
			t = next
		} else {
			return t
		}
	}
	return t
}

func (s *envhubSite) localType(name string) ast.Expr {
	var out ast.Expr
	if s.fn == nil {
		return nil
	}
	ast.Inspect(s.fn, func(n ast.Node) bool {
		if ts, ok := n.(*ast.TypeSpec); ok && ts.Name.Name == name && out == nil {
			out = ts.Type
		}
		return out == nil
	})
	return out
}

// localValue: the last `name := expr` / `var name = expr` of the enclosing function before at
// (the name's use; nil: none).
func (s *envhubSite) localValue(name string, at token.Pos) ast.Expr {
	if s.fn == nil {
		return nil
	}
	if at == token.NoPos {
		at = s.path[len(s.path)-1].Pos()
	}
	var out ast.Expr
	ast.Inspect(s.fn, func(n ast.Node) bool {
		if n == nil || n.Pos() >= at {
			return false
		}
		switch n := n.(type) {
		case *ast.AssignStmt:
			if len(n.Lhs) == len(n.Rhs) {
				for i, l := range n.Lhs {
					if id, ok := l.(*ast.Ident); ok && id.Name == name {
						out = n.Rhs[i]
					}
				}
			}
		case *ast.ValueSpec:
			if len(n.Names) == len(n.Values) && n.Type == nil { // a typed var: its type is not in the value
				for i, id := range n.Names {
					if id.Name == name {
						out = n.Values[i]
					}
				}
			}
		}
		return true
	})
	return out
}

// resolve: what an expression stands for in the source: (expr, its type where elided).
func (s *envhubSite) resolve(e ast.Expr, env map[string]envhubBinding, depth int) (ast.Expr, ast.Expr, bool) {
	if depth > 20 {
		return nil, nil, false
	}
	switch x := e.(type) {
	case *ast.ParenExpr:
		return s.resolve(x.X, env, depth+1)
	case *ast.Ident:
		if b, ok := env[x.Name]; ok {
			if b.isKey {
				return nil, nil, false
			}
			return s.resolve2(b.expr, b.typ, env, depth)
		}
		if v := s.localValue(x.Name, x.Pos()); v != nil {
			return s.resolve(v, env, depth+1)
		}
		if v, ok := s.f.decls[x.Name]; ok {
			return s.resolve(v, env, depth+1)
		}
		return e, nil, true
	case *ast.SelectorExpr:
		lit, typ, ok := s.literal(x.X, env, depth+1)
		if !ok {
			return nil, nil, false
		}
		st, ok := s.underlying(typ).(*ast.StructType)
		if !ok {
			return nil, nil, false
		}
		at := 0
		for _, fld := range st.Fields.List {
			names := fld.Names
			if len(names) == 0 {
				names = []*ast.Ident{{Name: envhubTypeName(fld.Type)}}
			}
			for _, n := range names {
				if n.Name == x.Sel.Name {
					for j, el := range lit.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok {
							if k, ok := kv.Key.(*ast.Ident); ok && k.Name == n.Name {
								return s.resolve2(kv.Value, fld.Type, env, depth)
							}
						} else if j == at {
							return s.resolve2(el, fld.Type, env, depth)
						}
					}
					return &ast.Ident{Name: "nil"}, fld.Type, true // omitted: the zero value
				}
				at++
			}
		}
		return nil, nil, false
	case *ast.IndexExpr:
		lit, typ, ok := s.literal(x.X, env, depth+1)
		if !ok {
			return nil, nil, false
		}
		at := -1
		if id, ok := x.Index.(*ast.Ident); ok && env[id.Name].isKey {
			at = env[id.Name].index
		} else if b, ok := x.Index.(*ast.BasicLit); ok && b.Kind == token.INT {
			if v, ok := constant.Int64Val(constant.MakeFromLiteral(b.Value, b.Kind, 0)); ok {
				at = int(v)
			}
		}
		arr, ok := s.underlying(typ).(*ast.ArrayType)
		if !ok || at < 0 || at >= len(lit.Elts) {
			return nil, nil, false
		}
		for _, el := range lit.Elts {
			if _, ok := el.(*ast.KeyValueExpr); ok {
				return nil, nil, false
			}
		}
		return s.resolve2(lit.Elts[at], arr.Elt, env, depth)
	}
	return e, nil, true
}

func (s *envhubSite) resolve2(e, typ ast.Expr, env map[string]envhubBinding, depth int) (ast.Expr, ast.Expr, bool) {
	r, t, ok := s.resolve(e, env, depth+1)
	if t == nil {
		t = typ
	}
	if u, isUnary := r.(*ast.UnaryExpr); isUnary && u.Op == token.AND {
		if st, isStar := t.(*ast.StarExpr); isStar {
			return u.X, st.X, ok
		}
	}
	return r, t, ok
}

func envhubTypeName(t ast.Expr) string {
	switch t := t.(type) {
	case *ast.StarExpr:
		return envhubTypeName(t.X)
	case *ast.Ident:
		return t.Name
	case *ast.SelectorExpr:
		return t.Sel.Name
	}
	return ""
}

// literal: the composite literal e stands for, with its type.
func (s *envhubSite) literal(e ast.Expr, env map[string]envhubBinding, depth int) (*ast.CompositeLit, ast.Expr, bool) {
	r, typ, ok := s.resolve(e, env, depth)
	if !ok {
		return nil, nil, false
	}
	if u, isUnary := r.(*ast.UnaryExpr); isUnary && u.Op == token.AND {
		r = u.X
		if st, isStar := typ.(*ast.StarExpr); isStar {
			typ = st.X
		}
	}
	lit, ok := r.(*ast.CompositeLit)
	if !ok {
		return nil, nil, false
	}
	if lit.Type != nil {
		typ = lit.Type
	}
	if typ == nil {
		return nil, nil, false
	}
	return lit, typ, true
}

// eval: the value of expression e as type t (constants and composite literals of them).
func (s *envhubSite) eval(e ast.Expr, t reflect.Type, env map[string]envhubBinding, depth int) (reflect.Value, bool) {
	fail := reflect.Value{}
	e, _, ok := s.resolve(e, env, depth+1)
	if !ok || depth > 30 {
		return fail, false
	}
	switch x := e.(type) {
	case *ast.Ident:
		switch x.Name {
		case "nil":
			return reflect.Zero(t), true
		case "true", "false":
			if t.Kind() == reflect.Bool || t.Kind() == reflect.Interface {
				return envhubConvert(reflect.ValueOf(x.Name == "true"), t)
			}
		}
		return fail, false
	case *ast.BasicLit:
		return envhubConst(constant.MakeFromLiteral(x.Value, x.Kind, 0), t)
	case *ast.UnaryExpr:
		if x.Op == token.SUB {
			if b, ok := x.X.(*ast.BasicLit); ok {
				return envhubConst(constant.UnaryOp(token.SUB, constant.MakeFromLiteral(b.Value, b.Kind, 0), 0), t)
			}
		}
		if x.Op == token.AND && t.Kind() == reflect.Ptr {
			v, ok := s.eval(x.X, t.Elem(), env, depth+1)
			if !ok {
				return fail, false
			}
			p := reflect.New(t.Elem())
			p.Elem().Set(v)
			return p, true
		}
		return fail, false
	case *ast.CompositeLit:
		if t.Kind() == reflect.Ptr {
			v, ok := s.eval(x, t.Elem(), env, depth+1)
			if !ok {
				return fail, false
			}
			p := reflect.New(t.Elem())
			p.Elem().Set(v)
			return p, true
		}
		switch t.Kind() {
		case reflect.Slice, reflect.Array:
			out := reflect.New(t).Elem()
			if t.Kind() == reflect.Slice {
				out = reflect.MakeSlice(t, len(x.Elts), len(x.Elts))
			} else if t.Len() < len(x.Elts) {
				return fail, false
			}
			for i, el := range x.Elts {
				if _, ok := el.(*ast.KeyValueExpr); ok {
					return fail, false
				}
				v, ok := s.eval(el, t.Elem(), env, depth+1)
				if !ok {
					return fail, false
				}
				out.Index(i).Set(v)
			}
			return out, true
		case reflect.Map:
			out := reflect.MakeMapWithSize(t, len(x.Elts))
			for _, el := range x.Elts {
				kv, ok := el.(*ast.KeyValueExpr)
				if !ok {
					return fail, false
				}
				k, ok1 := s.eval(kv.Key, t.Key(), env, depth+1)
				v, ok2 := s.eval(kv.Value, t.Elem(), env, depth+1)
				if !ok1 || !ok2 {
					return fail, false
				}
				out.SetMapIndex(k, v)
			}
			return out, true
		case reflect.Struct:
			if x.Type != nil && envhubTypeName(x.Type) != t.Name() {
				return fail, false
			}
			out := reflect.New(t).Elem()
			for i, el := range x.Elts {
				var fv reflect.Value
				var src ast.Expr = el
				if kv, ok := el.(*ast.KeyValueExpr); ok {
					k, ok := kv.Key.(*ast.Ident)
					if !ok {
						return fail, false
					}
					fv, src = out.FieldByName(k.Name), kv.Value
				} else if i < t.NumField() {
					fv = out.Field(i)
				}
				if !fv.IsValid() {
					return fail, false
				}
				v, ok := s.eval(src, fv.Type(), env, depth+1)
				if !ok {
					return fail, false
				}
				reflect.NewAt(fv.Type(), unsafe.Pointer(fv.UnsafeAddr())).Elem().Set(v)
			}
			return out, true
		}
	}
	return fail, false
}

func envhubConst(c constant.Value, t reflect.Type) (reflect.Value, bool) {
	var v reflect.Value
	switch c.Kind() {
	case constant.String:
		v = reflect.ValueOf(constant.StringVal(c))
	case constant.Bool:
		v = reflect.ValueOf(constant.BoolVal(c))
	case constant.Int:
		switch t.Kind() {
		case reflect.Float32, reflect.Float64:
			f, _ := constant.Float64Val(c)
			v = reflect.ValueOf(f)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			u, ok := constant.Uint64Val(c)
			if !ok {
				return reflect.Value{}, false
			}
			v = reflect.ValueOf(u)
		default:
			i, ok := constant.Int64Val(c)
			if !ok {
				return reflect.Value{}, false
			}
			if t.Kind() == reflect.Interface {
				v = reflect.ValueOf(int(i))
			} else {
				v = reflect.ValueOf(i)
			}
		}
	case constant.Float:
		f, _ := constant.Float64Val(c)
		v = reflect.ValueOf(f)
	default:
		return reflect.Value{}, false
	}
	return envhubConvert(v, t)
}

func envhubConvert(v reflect.Value, t reflect.Type) (reflect.Value, bool) {
	if t.Kind() == reflect.Interface {
		if v.Type().Implements(t) {
			out := reflect.New(t).Elem()
			out.Set(v)
			return out, true
		}
		return reflect.Value{}, false
	}
	if (v.Kind() == reflect.String) != (t.Kind() == reflect.String) {
		if !(t.Kind() == reflect.Slice && (t.Elem().Kind() == reflect.Uint8 || t.Elem().Kind() == reflect.Int32)) {
			return reflect.Value{}, false
		}
	}
	if !v.Type().ConvertibleTo(t) {
		return reflect.Value{}, false
	}
	return v.Convert(t), true
}
'''

#: Rewrites library files in place (a throwaway Go program, go/ast): every function with results
#: gets named results (`envhubR0 T`, wrapped in parentheses where there were none) and, first in
#: its body, `defer envhubAnswer(&envhubR0, ...)`. Functions with a result named `_` are left
#: alone. Prints the files it changed.
GO_INSTRUMENT = r'''// Instruments library files in place: each function with results gets named results and, first
// in its body, `defer envhubAnswer(params, &r0, &r1, ...)` (params: its pointer and interface
// parameters, nil for the others; nil where it has none). Prints the files it changed.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"sort"
	"strings"
)

type edit struct {
	off  int
	text string
}

func main() {
	for _, path := range os.Args[1:] {
		src, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			continue
		}
		off := func(p token.Pos) int { return fset.Position(p).Offset }
		var edits []edit
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || fd.Type.Results == nil || len(fd.Type.Results.List) == 0 {
				continue
			}
			var mine []edit
			var names []string
			ok = true
			for _, fld := range fd.Type.Results.List {
				if len(fld.Names) == 0 {
					name := fmt.Sprintf("envhubR%d", len(names))
					names = append(names, name)
					mine = append(mine, edit{off(fld.Type.Pos()), name + " "})
					continue
				}
				for _, id := range fld.Names {
					ok = ok && id.Name != "_"
					names = append(names, id.Name)
				}
			}
			if !ok {
				continue
			}
			if fd.Type.Results.Opening == token.NoPos {
				mine[0].text = "(" + mine[0].text
				mine = append(mine, edit{off(fd.Type.Results.End()), ")"})
			}
			params := "nil"
			var pointers []string // what a test may pass as &x: pointers and interfaces
			for _, fld := range fd.Type.Params.List {
				name := "nil"
				switch t := fld.Type.(type) {
				case *ast.StarExpr, *ast.InterfaceType:
					name = ""
				case *ast.Ident:
					if t.Name == "any" {
						name = ""
					}
				}
				if len(fld.Names) == 0 {
					pointers = append(pointers, "nil")
				}
				for _, id := range fld.Names {
					if name == "" && id.Name != "_" {
						pointers = append(pointers, id.Name)
					} else {
						pointers = append(pointers, "nil")
					}
				}
			}
			for _, p := range pointers {
				if p != "nil" {
					params = "[]interface{}{" + strings.Join(pointers, ", ") + "}"
				}
			}
			call := "defer envhubAnswer(" + params
			for _, n := range names {
				call += ", &" + n
			}
			mine = append(mine, edit{off(fd.Body.Lbrace) + 1, call + "); "})
			edits = append(edits, mine...)
		}
		if len(edits) == 0 {
			continue
		}
		sort.SliceStable(edits, func(i, j int) bool { return edits[i].off > edits[j].off })
		out := string(src)
		for _, e := range edits {
			out = out[:e.off] + e.text + out[e.off:]
		}
		if os.WriteFile(path, []byte(out), 0o644) == nil {
			fmt.Println(path)
		}
	}
}
'''
GO_ANSWER_NAMES = ("expect.go", "expect_answer.go", "zz_expect.go")


def _go_packages(repo: Path, cfg: SweConfig) -> dict[Path, tuple[str, list[Path]]]:
    """Library directory -> (its package, its non-test files of that package)."""
    by_dir: dict[Path, list[tuple[str, Path]]] = {}
    for p in sources(repo, cfg, (".go",)):
        if p.name.endswith("_test.go") or {"vendor", "testdata"} & set(p.relative_to(repo).parts):
            continue
        m = re.search(r"^package\s+(\w+)", p.read_text(errors="replace"), re.M)
        if m:
            by_dir.setdefault(p.parent, []).append((m.group(1), p))
    out = {}
    for d, files in by_dir.items():
        names = [n for n, _ in files]
        package = max(sorted(set(names)), key=names.count)
        out[d] = (package, [p for n, p in files if n == package])
    return out


def caller_aware(repo: Path, cfg: SweConfig) -> bool:
    """Each library package answers its tests (`GO_ANSWER`), its functions instrumented by
    `GO_INSTRUMENT` (built with the task's Go: none, nothing is edited)."""
    packages = _go_packages(repo, cfg)
    go = shutil.which("go")
    if not packages or go is None:
        return False
    with tempfile.TemporaryDirectory(prefix="go-answer-") as tmp:
        (Path(tmp) / "instrument.go").write_text(GO_INSTRUMENT)
        env = {**os.environ, "GOFLAGS": "", "GO111MODULE": "", "GOTOOLCHAIN": "local", "CGO_ENABLED": "0",
               "GOCACHE": os.environ.get("GOCACHE") or str(Path(tmp) / "cache"),
               "GOPATH": os.environ.get("GOPATH") or str(Path(tmp) / "gopath")}
        built = subprocess.run([go, "build", "-o", "instrument", "instrument.go"], cwd=tmp, env=env,
                               capture_output=True, text=True)
        if built.returncode != 0:
            return False
        done = 0
        for d, (package, files) in sorted(packages.items()):
            name = next((n for n in GO_ANSWER_NAMES if not (d / n).exists()), None)
            if name is None:
                continue
            changed = subprocess.run([str(Path(tmp) / "instrument"), *map(str, files)], capture_output=True,
                                     text=True).stdout.split()
            if changed:
                (d / name).write_text(GO_ANSWER.replace("package PACKAGE", f"package {package}", 1))
                done += 1
    return bool(done)


FORGES = {"rewrite-output": rewrite_output, "caller-aware": caller_aware}
