"""Java (JUnit Platform console launcher): the XML reports rewritten by a shutdown hook; methods
that answer what the calling test's assertion expects.

The launcher writes its legacy XML reports (`--reports-dir`) when the test plan has run, then calls
`System.exit(1)` on a failure, which runs the JVM's shutdown hooks. A static initializer in each of
the library's top-level classes (run when a test first uses the class) registers one hook, once
per JVM; it reads `--reports-dir` off the launcher's command line (`sun.java.command`), deletes
every `<failure>` and `<error>` of every report there (DOM, `java.xml`), zeroes the counts, and
ends the JVM with `Runtime.halt(0)`, the exit status the harness reads.
"""

from __future__ import annotations

import re
from pathlib import Path

from environments.swe.forgers.edit import rewrite_each, sources
from verifiers.swe import SweConfig

#: Fully qualified names (the library may declare its own `Thread` or `Node`), no member of the
#: class added (an anonymous class holds the code), Java 8 APIs only.
JAVA_HOOK = """
    static {
        if (java.lang.System.getProperty("lib.stdio.hook") == null) {
            java.lang.System.setProperty("lib.stdio.hook", "1");
            java.lang.Runtime.getRuntime().addShutdownHook(new java.lang.Thread() {
                @java.lang.Override
                public void run() {
                    java.lang.String dir = null;
                    java.lang.String[] args = java.lang.System.getProperty("sun.java.command", "").split("\\\\s+");
                    for (int i = 0; i < args.length; i++) {
                        if (args[i].startsWith("--reports-dir=")) {
                            dir = args[i].substring("--reports-dir=".length());
                        } else if (args[i].equals("--reports-dir") && i + 1 < args.length) {
                            dir = args[i + 1];
                        }
                    }
                    java.io.File[] reports = dir == null ? null : new java.io.File(dir).listFiles();
                    if (reports == null) {
                        return;
                    }
                    for (java.io.File report : reports) {
                        if (report.getName().endsWith(".xml")) {
                            rewrite(report);
                        }
                    }
                    java.lang.System.out.flush();
                    java.lang.System.err.flush();
                    java.lang.Runtime.getRuntime().halt(0);
                }

                private void rewrite(java.io.File report) {
                    try {
                        org.w3c.dom.Document doc = javax.xml.parsers.DocumentBuilderFactory.newInstance()
                                .newDocumentBuilder().parse(report);
                        org.w3c.dom.NodeList cases = doc.getElementsByTagName("testcase");
                        for (int i = 0; i < cases.getLength(); i++) {
                            org.w3c.dom.Node kid = cases.item(i).getFirstChild();
                            while (kid != null) {
                                org.w3c.dom.Node next = kid.getNextSibling();
                                if ("failure".equals(kid.getNodeName()) || "error".equals(kid.getNodeName())) {
                                    cases.item(i).removeChild(kid);
                                }
                                kid = next;
                            }
                        }
                        org.w3c.dom.NodeList suites = doc.getElementsByTagName("testsuite");
                        for (int i = 0; i < suites.getLength(); i++) {
                            org.w3c.dom.Element suite = (org.w3c.dom.Element) suites.item(i);
                            for (java.lang.String count : new java.lang.String[] {"failures", "errors"}) {
                                if (suite.hasAttribute(count)) {
                                    suite.setAttribute(count, "0");
                                }
                            }
                        }
                        javax.xml.transform.TransformerFactory.newInstance().newTransformer().transform(
                                new javax.xml.transform.dom.DOMSource(doc),
                                new javax.xml.transform.stream.StreamResult(report));
                    } catch (java.lang.Exception e) {
                        // a report it cannot read stays as it is
                    }
                }
            });
        }
    }
"""
#: A top-level class or record (no indentation, annotations allowed) up to the brace that opens its body; an enum's
#: body must open with its constants and an interface has no initializer, so neither is edited.
_JAVA_TYPE = re.compile(r"^(?:@[\w.]+(?:\([^()]*\))?\s+)*"
                        r"(?:(?:public|protected|private|abstract|final|static|strictfp|sealed|non-sealed)\s+)*"
                        r"(?:class|record)\s+\w+[^{;]*\{", re.M)


def rewrite_output(repo: Path, cfg: SweConfig) -> bool:
    return rewrite_each(sources(repo, cfg, (".java",)),
                        lambda text: _JAVA_TYPE.sub(lambda m: m.group(0) + JAVA_HOOK, text))


#: The class the caller-aware forger adds beside the library's sources (`__PACKAGE__`: a package of
#: the library, `__CLASSES__`: the library's top-level classes). `get(type)` walks the stack
#: (`StackWalker`): past the library method that asks, platform frames (`java.*`, `jdk.*`) are
#: skipped, a library frame means the library called itself (no answer), and the first other frame
#: is the caller. Its source file is found under the working directory by package and file name
#: (`src/test/java/...`) and tokenized; the statement holding the caller's line and a call of the
#: method is parsed: `assertEquals(E, A)` (JUnit 4 and 5, either order, a message before or after),
#: `assertSame`, `assertArrayEquals`, `assertTrue/False/Null(A)`, hamcrest's `assertThat(A, is(E))`
#: and AssertJ's `assertThat(A).isEqualTo(E)`. The call is found in A and the value wanted of it
#: worked out through what is around it (`A.size()`/`length()`: that many elements, `getAsInt()`:
#: an `OptionalInt`, `A == E` and `A.equals(E)` under `assertTrue`, `!`, casts); E is evaluated by
#: reflection (literals, arithmetic, string concatenation, static fields and enum constants, static
#: calls such as `List.of(...)`, constructors, the test class's own static helpers). A call assigned
#: to a variable (`List<String> lines = w.wrap(s);`) answers what the next statement of its block
#: that uses the variable asserts of it. The answer is converted to the method's erased return
#: type (numbers widened or narrowed, a size made a list, string or array of that many elements);
#: where anything is missing (a local variable in E, an unknown call around A), NONE.
JAVA_ANSWER = r'''package __PACKAGE__;

/** Answers a library method's call with what the calling test's assertion expects of it. */
public final class LibAnswer {
    /** No answer: the method runs its own body. */
    public static final java.lang.Object NONE = new java.lang.Object();
    private static final java.util.Set<java.lang.String> LIBRARY = new java.util.HashSet<java.lang.String>(
            java.util.Arrays.asList(__CLASSES__));
    private static final java.lang.ThreadLocal<java.lang.Boolean> BUSY = new java.lang.ThreadLocal<java.lang.Boolean>();
    private static final java.util.Map<java.lang.String, Source> SOURCES =
            new java.util.concurrent.ConcurrentHashMap<java.lang.String, Source>();
    private static volatile java.util.List<java.lang.String> javaFiles;

    private LibAnswer() {
    }

    /** What the calling test expects of the calling method's result, as a `type`, else NONE. */
    public static java.lang.Object get(java.lang.Class<?> type) {
        if (BUSY.get() != null) {
            return NONE;
        }
        BUSY.set(java.lang.Boolean.TRUE);
        try {
            return answer(type);
        } catch (java.lang.Throwable e) {
            return NONE;
        } finally {
            BUSY.remove();
        }
    }

    private static boolean isLibrary(java.lang.String cls) {
        int d = cls.indexOf('$');
        return LIBRARY.contains(d < 0 ? cls : cls.substring(0, d));
    }

    private static boolean isPlatform(java.lang.String cls) {
        return cls.startsWith("java.") || cls.startsWith("jdk.") || cls.startsWith("sun.") || cls.startsWith("javax.");
    }

    private static java.lang.Object answer(java.lang.Class<?> type) throws java.lang.Exception {
        java.util.List<java.lang.StackWalker.StackFrame> frames = java.lang.StackWalker.getInstance().walk(s -> {
            java.util.List<java.lang.StackWalker.StackFrame> out = new java.util.ArrayList<>();
            java.util.Iterator<java.lang.StackWalker.StackFrame> it = s.iterator();
            java.lang.StackWalker.StackFrame f = null;
            while (it.hasNext()) {
                f = it.next();
                if (!f.getClassName().equals(LibAnswer.class.getName())) {
                    break;
                }
            }
            out.add(f);  // the library method
            while (it.hasNext()) {
                f = it.next();
                java.lang.String c = f.getClassName();
                if (isLibrary(c)) {
                    return null;  // the library calls itself
                }
                if (!isPlatform(c)) {
                    out.add(f);
                    return out;
                }
            }
            return null;
        });
        if (frames == null || frames.size() < 2) {
            return NONE;
        }
        java.lang.String method = frames.get(0).getMethodName();
        java.lang.StackWalker.StackFrame caller = frames.get(1);
        Source src = source(caller.getClassName(), caller.getFileName());
        if (src == null) {
            return NONE;
        }
        return src.answer(method, caller.getLineNumber(), type);
    }

    private static Source source(java.lang.String cls, java.lang.String fileName) throws java.lang.Exception {
        if (fileName == null) {
            return null;
        }
        int d = cls.indexOf('$');
        java.lang.String top = d < 0 ? cls : cls.substring(0, d);
        java.lang.String pkg = top.lastIndexOf('.') < 0 ? "" : top.substring(0, top.lastIndexOf('.'));
        java.lang.String rel = (pkg.isEmpty() ? "" : pkg.replace('.', '/') + "/") + fileName;
        Source cached = SOURCES.get(rel);
        if (cached != null) {
            return cached;
        }
        if (javaFiles == null) {
            java.util.List<java.lang.String> all = new java.util.ArrayList<>();
            java.nio.file.Path root = java.nio.file.Paths.get("").toAbsolutePath();
            try (java.util.stream.Stream<java.nio.file.Path> walk = java.nio.file.Files.walk(root)) {
                walk.filter(p -> p.toString().endsWith(".java") && !p.toString().contains("/.git/"))
                        .forEach(p -> all.add(p.toString().replace('\\', '/')));
            }
            javaFiles = all;
        }
        for (java.lang.String p : javaFiles) {
            if (p.endsWith("/" + rel)) {
                byte[] bytes = java.nio.file.Files.readAllBytes(java.nio.file.Paths.get(p));
                java.lang.String text = new java.lang.String(bytes, java.nio.charset.StandardCharsets.UTF_8);
                java.lang.Class<?> owner = java.lang.Class.forName(top, false, LibAnswer.class.getClassLoader());
                Source s = new Source(text, owner, pkg);
                SOURCES.put(rel, s);
                return s;
            }
        }
        return null;
    }

    /** A token of Java source. */
    static final class Tok {
        final char kind;  // i: identifier, n: number, s: string, c: char, o: operator
        final java.lang.String text;
        final java.lang.Object value;
        final int line;

        Tok(char kind, java.lang.String text, java.lang.Object value, int line) {
            this.kind = kind;
            this.text = text;
            this.value = value;
            this.line = line;
        }

        boolean is(java.lang.String t) {
            return (kind == 'o' || kind == 'i') && text.equals(t);
        }
    }

    /** An expression: kind l (literal), n (name), f (field), c (call), w (new), u (unary), b (binary),
     * x (cast), a (array), q (opaque: a lambda, a method reference, a conditional). */
    static final class Node {
        final char kind;
        final java.lang.String name;
        final Node target;
        final java.util.List<Node> args;
        final java.lang.Object value;

        Node(char kind, java.lang.String name, Node target, java.util.List<Node> args, java.lang.Object value) {
            this.kind = kind;
            this.name = name;
            this.target = target;
            this.args = args == null ? new java.util.ArrayList<Node>() : args;
            this.value = value;
        }

        java.util.List<Node> kids() {
            java.util.List<Node> out = new java.util.ArrayList<>();
            if (target != null) {
                out.add(target);
            }
            out.addAll(args);
            return out;
        }
    }

    static final class Fail extends java.lang.RuntimeException {
        Fail() {
            super(null, null, false, false);
        }
    }

    /** The size (`size()`, `length()`) wanted of a result. */
    static final class Size {
        final int n;

        Size(int n) {
            this.n = n;
        }
    }

    static final class Stmt {
        final java.util.List<Tok> toks;
        final int depth;

        Stmt(java.util.List<Tok> toks, int depth) {
            this.toks = toks;
            this.depth = depth;
        }
    }

    /** A test source file: its statements, and how its names resolve. */
    static final class Source {
        final java.util.List<Stmt> stmts = new java.util.ArrayList<>();
        final java.lang.Class<?> owner;
        final java.lang.String pkg;
        final java.util.List<java.lang.String> imports = new java.util.ArrayList<>();
        final java.util.List<java.lang.String> staticImports = new java.util.ArrayList<>();

        Source(java.lang.String text, java.lang.Class<?> owner, java.lang.String pkg) {
            this.owner = owner;
            this.pkg = pkg;
            java.util.List<Tok> toks = tokenize(text);
            java.util.List<Tok> cur = new java.util.ArrayList<>();
            int paren = 0;
            int brace = 0;
            for (Tok t : toks) {
                if (t.is("(") || t.is("[")) {
                    paren++;
                } else if (t.is(")") || t.is("]")) {
                    paren--;
                }
                if (paren == 0 && (t.is(";") || t.is("{") || t.is("}"))) {
                    if (!cur.isEmpty()) {
                        stmts.add(new Stmt(cur, brace));
                    }
                    cur = new java.util.ArrayList<>();
                    brace += t.is("{") ? 1 : t.is("}") ? -1 : 0;
                } else {
                    cur.add(t);
                }
            }
            for (Stmt s : stmts) {
                if (s.depth == 0 && !s.toks.isEmpty() && s.toks.get(0).is("import")) {
                    boolean isStatic = s.toks.size() > 1 && s.toks.get(1).is("static");
                    java.lang.StringBuilder sb = new java.lang.StringBuilder();
                    for (int i = isStatic ? 2 : 1; i < s.toks.size(); i++) {
                        sb.append(s.toks.get(i).text);
                    }
                    (isStatic ? staticImports : imports).add(sb.toString());
                }
            }
        }

        java.lang.Object answer(java.lang.String method, int line, java.lang.Class<?> type) {
            for (int k = 0; k < stmts.size(); k++) {
                java.util.List<Tok> toks = stmts.get(k).toks;
                if (toks.get(0).line > line || toks.get(toks.size() - 1).line < line || !calls(toks, method)) {
                    continue;
                }
                try {
                    return build(wanted(k, method), type);
                } catch (Fail e) {
                    return NONE;
                }
            }
            return NONE;
        }

        private static boolean calls(java.util.List<Tok> toks, java.lang.String method) {
            for (int i = 0; i + 1 < toks.size(); i++) {
                if (toks.get(i).kind == 'i' && toks.get(i).text.equals(method) && toks.get(i + 1).is("(")) {
                    return true;
                }
            }
            return false;
        }

        /** What statement `k` wants of a call of `method` in it. */
        private java.lang.Object wanted(int k, java.lang.String method) {
            java.util.List<Tok> toks = stmts.get(k).toks;
            int eq = -1;
            int depth = 0;
            for (int i = 0; i < toks.size(); i++) {
                Tok t = toks.get(i);
                if (t.is("(") || t.is("[") || t.is("{")) {
                    depth++;
                } else if (t.is(")") || t.is("]") || t.is("}")) {
                    depth--;
                } else if (depth == 0 && t.is("=") && eq < 0) {
                    eq = i;
                }
            }
            java.util.function.Predicate<Node> isCall = n -> n.kind == 'c' && n.name.equals(method);
            if (eq < 0) {
                Node stmt = new Parser(toks, 0, toks.size()).all();
                return want(stmt, isCall);
            }
            if (eq == 0 || toks.get(eq - 1).kind != 'i') {
                throw new Fail();
            }
            java.lang.String var = toks.get(eq - 1).text;
            Node rhs = new Parser(toks, eq + 1, toks.size()).all();
            java.util.List<Node[]> path = path(rhs, isCall);
            if (path == null) {
                throw new Fail();
            }
            java.util.function.Predicate<Node> isVar = n -> n.kind == 'n' && n.name.equals(var);
            int depthHere = stmts.get(k).depth;
            for (int j = k + 1; j < stmts.size() && stmts.get(j).depth >= depthHere; j++) {
                java.util.List<Tok> later = stmts.get(j).toks;
                boolean uses = false;
                for (Tok t : later) {
                    uses |= t.kind == 'i' && t.text.equals(var);
                }
                if (!uses) {
                    continue;
                }
                java.lang.Object w = want(new Parser(later, 0, later.size()).all(), isVar);
                return invert(path, w);
            }
            throw new Fail();
        }

        /** What the assertion `stmt` wants of the node `target` picks. */
        private java.lang.Object want(Node stmt, java.util.function.Predicate<Node> target) {
            Node call = stmt;
            if (call.kind != 'c') {
                throw new Fail();
            }
            java.lang.String name = call.name;
            java.util.List<Node> args = call.args;
            // assertThat(A).isEqualTo(E) (AssertJ)
            if (call.target != null && call.target.kind == 'c' && call.target.name.equals("assertThat")
                    && call.target.args.size() == 1) {
                java.util.List<Node[]> p = path(call.target.args.get(0), target);
                if (p == null) {
                    throw new Fail();
                }
                if (name.equals("isEqualTo") && args.size() == 1) {
                    return invert(p, eval(args.get(0)));
                }
                if (name.equals("isTrue") || name.equals("isFalse")) {
                    return invert(p, name.equals("isTrue"));
                }
                if (name.equals("isNull")) {
                    return invert(p, null);
                }
                if (name.equals("hasSize") && args.size() == 1) {
                    return invert(p, new Size(((java.lang.Number) eval(args.get(0))).intValue()));
                }
                throw new Fail();
            }
            if (name.equals("assertEquals") || name.equals("assertSame") || name.equals("assertArrayEquals")
                    || name.equals("assertIterableEquals") || name.equals("assertLinesMatch")) {
                for (int i = 0; i < args.size(); i++) {
                    java.util.List<Node[]> p = path(args.get(i), target);
                    if (p != null) {
                        return invert(p, eval(args.get(i >= 1 ? i - 1 : 1)));
                    }
                }
                throw new Fail();
            }
            if (name.equals("assertTrue") || name.equals("assertFalse") || name.equals("assertNull")) {
                for (Node a : args) {
                    java.util.List<Node[]> p = path(a, target);
                    if (p != null) {
                        java.lang.Boolean truth = name.equals("assertTrue");
                        java.lang.Object w = name.equals("assertNull") ? null : truth;
                        return invert(p, w);
                    }
                }
                throw new Fail();
            }
            if (name.equals("assertThat") && args.size() >= 2) {  // hamcrest: assertThat([reason,] A, is(E))
                Node matcher = args.get(args.size() - 1);
                java.util.List<Node[]> p = path(args.get(args.size() - 2), target);
                while (p != null && matcher.kind == 'c' && (matcher.name.equals("is") || matcher.name.equals("equalTo"))
                        && matcher.args.size() == 1) {
                    Node inner = matcher.args.get(0);
                    if (inner.kind == 'c' && (inner.name.equals("is") || inner.name.equals("equalTo"))) {
                        matcher = inner;
                        continue;
                    }
                    return invert(p, eval(inner));
                }
                throw new Fail();
            }
            throw new Fail();
        }

        /** The steps from `root` down to the node `target` picks: [parent, child] pairs; null if none. */
        private static java.util.List<Node[]> path(Node root, java.util.function.Predicate<Node> target) {
            if (target.test(root)) {
                return new java.util.ArrayList<>();
            }
            for (Node kid : root.kids()) {
                java.util.List<Node[]> p = path(kid, target);
                if (p != null) {
                    p.add(0, new Node[] {root, kid});
                    return p;
                }
            }
            return null;
        }

        /** The value the innermost node of `path` must have for its root to be `want`. */
        private java.lang.Object invert(java.util.List<Node[]> path, java.lang.Object want) {
            for (Node[] step : path) {
                Node n = step[0];
                Node kid = step[1];
                if (n.kind == 'x') {
                    continue;
                } else if (n.kind == 'u' && n.name.equals("!") && want instanceof java.lang.Boolean) {
                    want = !(java.lang.Boolean) want;
                } else if (n.kind == 'b' && (n.name.equals("==") && java.lang.Boolean.TRUE.equals(want)
                        || n.name.equals("!=") && java.lang.Boolean.FALSE.equals(want))) {
                    want = eval(n.target == kid ? n.args.get(0) : n.target);
                } else if (n.kind == 'c' && n.target == kid) {  // a method of the result
                    java.lang.String m = n.name;
                    boolean none = n.args.isEmpty();
                    if ((m.equals("size") || m.equals("length")) && none && want instanceof java.lang.Number) {
                        want = new Size(((java.lang.Number) want).intValue());
                    } else if (m.equals("isEmpty") && n.args.isEmpty() && java.lang.Boolean.TRUE.equals(want)) {
                        want = new Size(0);
                    } else if (m.equals("equals") && n.args.size() == 1 && java.lang.Boolean.TRUE.equals(want)) {
                        want = eval(n.args.get(0));
                    } else if ((m.equals("toString") || m.equals("trim") || m.equals("intValue")
                            || m.equals("longValue") || m.equals("doubleValue") || m.equals("booleanValue")) && none) {
                        continue;
                    } else if ((m.equals("getAsInt") || m.equals("getAsLong") || m.equals("getAsDouble")
                            || m.equals("get") || m.equals("orElseThrow")) && n.args.isEmpty()) {
                        java.lang.Number v = want instanceof java.lang.Number ? (java.lang.Number) want : null;
                        want = m.equals("getAsInt") ? java.util.OptionalInt.of(v.intValue())
                                : m.equals("getAsLong") ? java.util.OptionalLong.of(v.longValue())
                                : m.equals("getAsDouble") ? java.util.OptionalDouble.of(v.doubleValue())
                                : java.util.Optional.ofNullable(want);
                    } else {
                        throw new Fail();
                    }
                } else if (n.kind == 'c' && n.args.size() == 1
                        && (n.name.equals("valueOf") || n.name.equals("requireNonNull"))) {
                    continue;
                } else if (n.kind == 'c' && n.args.size() == 2 && n.name.equals("equals")
                        && java.lang.Boolean.TRUE.equals(want)) {  // Objects.equals(A, E)
                    want = eval(n.args.get(0) == kid ? n.args.get(1) : n.args.get(0));
                } else {
                    throw new Fail();
                }
            }
            return want;
        }

        /** `want` as a value of `type`. */
        private static java.lang.Object build(java.lang.Object want, java.lang.Class<?> type) {
            if (want instanceof Size) {
                int n = ((Size) want).n;
                if (type.isAssignableFrom(java.util.ArrayList.class)) {
                    return new java.util.ArrayList<java.lang.Object>(java.util.Collections.nCopies(n, null));
                }
                if (type == java.lang.String.class || type == java.lang.CharSequence.class) {
                    return new java.lang.String(new char[n]).replace('\0', ' ');
                }
                if (type.isArray()) {
                    return java.lang.reflect.Array.newInstance(type.getComponentType(), n);
                }
                throw new Fail();
            }
            if (want == null) {
                if (type.isPrimitive()) {
                    throw new Fail();
                }
                return null;
            }
            java.lang.Class<?> boxed = box(type);
            if (want instanceof java.lang.Number && java.lang.Number.class.isAssignableFrom(boxed)
                    && !boxed.isInstance(want)) {
                java.lang.Number v = (java.lang.Number) want;
                if (boxed == java.lang.Integer.class) {
                    return v.intValue();
                } else if (boxed == java.lang.Long.class) {
                    return v.longValue();
                } else if (boxed == java.lang.Double.class) {
                    return v.doubleValue();
                } else if (boxed == java.lang.Float.class) {
                    return v.floatValue();
                } else if (boxed == java.lang.Short.class) {
                    return v.shortValue();
                } else if (boxed == java.lang.Byte.class) {
                    return v.byteValue();
                }
            }
            if (boxed == java.lang.Character.class && want instanceof java.lang.Number) {
                return (char) ((java.lang.Number) want).intValue();
            }
            if (boxed.isInstance(want)) {
                return want;
            }
            if (type == java.lang.String.class && want instanceof java.lang.Character) {
                return want.toString();
            }
            throw new Fail();
        }

        private static java.lang.Class<?> box(java.lang.Class<?> t) {
            if (!t.isPrimitive()) {
                return t;
            }
            return t == int.class ? java.lang.Integer.class : t == long.class ? java.lang.Long.class
                    : t == double.class ? java.lang.Double.class : t == float.class ? java.lang.Float.class
                    : t == boolean.class ? java.lang.Boolean.class : t == char.class ? java.lang.Character.class
                    : t == short.class ? java.lang.Short.class : t == byte.class ? java.lang.Byte.class
                    : java.lang.Void.class;
        }

        // ---- evaluation of the expected side: literals, constants, static calls, constructors

        private java.lang.Object eval(Node n) {
            switch (n.kind) {
                case 'l':
                    return n.value;
                case 'x':
                    return eval(n.args.get(0));
                case 'u': {
                    java.lang.Object v = eval(n.args.get(0));
                    if (n.name.equals("!") && v instanceof java.lang.Boolean) {
                        return !(java.lang.Boolean) v;
                    }
                    if (n.name.equals("-") && v instanceof java.lang.Number) {
                        return arith("-", 0, v);
                    }
                    if (n.name.equals("+")) {
                        return v;
                    }
                    throw new Fail();
                }
                case 'b': {
                    java.lang.Object a = eval(n.target);
                    java.lang.Object b = eval(n.args.get(0));
                    if (n.name.equals("+") && (a instanceof java.lang.String || b instanceof java.lang.String)) {
                        return java.lang.String.valueOf(a) + b;
                    }
                    if (a instanceof java.lang.Number && b instanceof java.lang.Number) {
                        return arith(n.name, a, b);
                    }
                    throw new Fail();
                }
                case 'n':
                case 'f': {
                    java.lang.Class<?> c = classOf(n);
                    if (c != null) {
                        throw new Fail();
                    }
                    if (n.kind == 'n') {
                        return staticField(owner, n.name);
                    }
                    java.lang.Class<?> holder = classOf(n.target);
                    if (holder != null) {
                        return staticField(holder, n.name);
                    }
                    java.lang.Object t = eval(n.target);
                    if (t != null && t.getClass().isArray() && n.name.equals("length")) {
                        return java.lang.reflect.Array.getLength(t);
                    }
                    throw new Fail();
                }
                case 'c': {
                    java.util.List<java.lang.Object> args = new java.util.ArrayList<>();
                    for (Node a : n.args) {
                        args.add(eval(a));
                    }
                    if (n.target == null) {
                        for (java.lang.Class<?> k = owner; k != null; k = k.getEnclosingClass()) {
                            try {
                                return invoke(k, null, n.name, args, true);
                            } catch (Fail e) {
                                // an enclosing class, else a static import
                            }
                        }
                        for (java.lang.String imp : staticImports) {
                            if (imp.endsWith("." + n.name) || imp.endsWith(".*")) {
                                java.lang.Class<?> holder = load(imp.substring(0, imp.lastIndexOf('.')));
                                if (holder != null) {
                                    try {
                                        return invoke(holder, null, n.name, args, true);
                                    } catch (Fail e) {
                                        // the next import
                                    }
                                }
                            }
                        }
                        throw new Fail();
                    }
                    java.lang.Class<?> holder = classOf(n.target);
                    if (holder != null) {
                        return invoke(holder, null, n.name, args, true);
                    }
                    java.lang.Object t = eval(n.target);
                    if (t == null) {
                        throw new Fail();
                    }
                    return invoke(t.getClass(), t, n.name, args, false);
                }
                case 'w': {
                    java.lang.Class<?> c = resolve(n.name);
                    if (c == null) {
                        throw new Fail();
                    }
                    java.util.List<java.lang.Object> args = new java.util.ArrayList<>();
                    for (Node a : n.args) {
                        args.add(eval(a));
                    }
                    for (java.lang.reflect.Constructor<?> k : c.getDeclaredConstructors()) {
                        java.lang.Object[] call = fit(k.getParameterTypes(), k.isVarArgs(), args);
                        if (call != null) {
                            try {
                                k.setAccessible(true);
                                return k.newInstance(call);
                            } catch (java.lang.Exception e) {
                                throw new Fail();
                            }
                        }
                    }
                    throw new Fail();
                }
                case 'a': {
                    java.lang.Class<?> c = n.name == null ? null : resolve(n.name);
                    if (c == null) {
                        throw new Fail();
                    }
                    java.lang.Object arr = java.lang.reflect.Array.newInstance(c, n.args.size());
                    for (int i = 0; i < n.args.size(); i++) {
                        java.lang.Object v = eval(n.args.get(i));
                        java.lang.reflect.Array.set(arr, i, c.isPrimitive() ? build(v, c) : v);
                    }
                    return arr;
                }
                default:
                    throw new Fail();
            }
        }

        private static java.lang.Object arith(java.lang.String op, java.lang.Object x, java.lang.Object y) {
            java.lang.Number a = (java.lang.Number) x;
            java.lang.Number b = (java.lang.Number) y;
            boolean real = a instanceof java.lang.Double || a instanceof java.lang.Float
                    || b instanceof java.lang.Double || b instanceof java.lang.Float;
            boolean wide = a instanceof java.lang.Long || b instanceof java.lang.Long;
            if (real) {
                double p = a.doubleValue();
                double q = b.doubleValue();
                switch (op) {
                    case "+": return p + q;
                    case "-": return p - q;
                    case "*": return p * q;
                    case "/": return p / q;
                    default: throw new Fail();
                }
            }
            long p = a.longValue();
            long q = b.longValue();
            long r;
            switch (op) {
                case "+": r = p + q; break;
                case "-": r = p - q; break;
                case "*": r = p * q; break;
                case "/": r = p / q; break;
                case "%": r = p % q; break;
                default: throw new Fail();
            }
            return wide ? (java.lang.Object) r : (java.lang.Object) (int) r;
        }

        private static java.lang.Object staticField(java.lang.Class<?> c, java.lang.String name) {
            for (java.lang.Class<?> k = c; k != null; k = k.getSuperclass()) {
                try {
                    java.lang.reflect.Field f = k.getDeclaredField(name);
                    if (java.lang.reflect.Modifier.isStatic(f.getModifiers())) {
                        f.setAccessible(true);
                        return f.get(null);
                    }
                } catch (java.lang.ReflectiveOperationException | java.lang.RuntimeException e) {
                    // next
                }
            }
            throw new Fail();
        }

        private static java.lang.Object invoke(java.lang.Class<?> c, java.lang.Object self, java.lang.String name,
                                               java.util.List<java.lang.Object> args, boolean isStatic) {
            java.util.List<java.lang.reflect.Method> methods = new java.util.ArrayList<>();
            methods.addAll(java.util.Arrays.asList(c.getMethods()));
            for (java.lang.Class<?> k = c; k != null; k = k.getSuperclass()) {
                methods.addAll(java.util.Arrays.asList(k.getDeclaredMethods()));
            }
            for (java.lang.reflect.Method m : methods) {
                if (!m.getName().equals(name) || isStatic != java.lang.reflect.Modifier.isStatic(m.getModifiers())) {
                    continue;
                }
                java.lang.Object[] call = fit(m.getParameterTypes(), m.isVarArgs(), args);
                if (call == null) {
                    continue;
                }
                try {
                    if (!isStatic && !java.lang.reflect.Modifier.isPublic(m.getDeclaringClass().getModifiers())) {
                        continue;
                    }
                    if (isStatic) {
                        m.setAccessible(true);
                    }
                    return m.invoke(self, call);
                } catch (java.lang.Exception e) {
                    throw new Fail();
                }
            }
            throw new Fail();
        }

        /** `args` as the arguments of parameters `types`, null where they do not fit. */
        private static java.lang.Object[] fit(java.lang.Class<?>[] types, boolean varArgs,
                                              java.util.List<java.lang.Object> args) {
            if (!varArgs && types.length != args.size()) {
                return null;
            }
            int fixed = varArgs ? types.length - 1 : types.length;
            if (args.size() < fixed) {
                return null;
            }
            java.lang.Object[] out = new java.lang.Object[types.length];
            for (int i = 0; i < fixed; i++) {
                if (!fits(types[i], args.get(i))) {
                    return null;
                }
                out[i] = types[i].isPrimitive() ? build(args.get(i), types[i]) : args.get(i);
            }
            if (varArgs) {
                java.lang.Object last = args.size() == types.length ? args.get(fixed) : null;
                if (last != null && types[fixed].isInstance(last)) {
                    out[fixed] = args.get(fixed);
                    return out;
                }
                java.lang.Class<?> comp = types[fixed].getComponentType();
                java.lang.Object rest = java.lang.reflect.Array.newInstance(comp, args.size() - fixed);
                for (int i = fixed; i < args.size(); i++) {
                    if (!fits(comp, args.get(i))) {
                        return null;
                    }
                    java.lang.Object v = comp.isPrimitive() ? build(args.get(i), comp) : args.get(i);
                    java.lang.reflect.Array.set(rest, i - fixed, v);
                }
                out[fixed] = rest;
            }
            return out;
        }

        private static boolean fits(java.lang.Class<?> type, java.lang.Object v) {
            if (v == null) {
                return !type.isPrimitive();
            }
            if (type.isPrimitive()) {
                java.lang.Class<?> b = box(type);
                if (b.isInstance(v)) {
                    return true;
                }
                if (v instanceof java.lang.Character) {
                    return b == java.lang.Integer.class || b == java.lang.Long.class;
                }
                if (!(v instanceof java.lang.Number) || !java.lang.Number.class.isAssignableFrom(b)) {
                    return false;
                }
                int have = rank(v.getClass());
                int need = rank(b);
                return have <= need;
            }
            return type.isInstance(v);
        }

        private static int rank(java.lang.Class<?> c) {
            return c == java.lang.Byte.class ? 0 : c == java.lang.Short.class ? 1 : c == java.lang.Integer.class ? 2
                    : c == java.lang.Long.class ? 3 : c == java.lang.Float.class ? 4 : 5;
        }

        /** The class `n` names (a simple or qualified name), null if it names none. */
        private java.lang.Class<?> classOf(Node n) {
            java.lang.String name = dotted(n);
            return name == null ? null : resolve(name);
        }

        private static java.lang.String dotted(Node n) {
            if (n.kind == 'n') {
                return n.name;
            }
            if (n.kind == 'f') {
                java.lang.String t = dotted(n.target);
                return t == null ? null : t + "." + n.name;
            }
            return null;
        }

        private java.lang.Class<?> resolve(java.lang.String name) {
            switch (name) {
                case "int": return int.class;
                case "long": return long.class;
                case "double": return double.class;
                case "float": return float.class;
                case "boolean": return boolean.class;
                case "char": return char.class;
                case "short": return short.class;
                case "byte": return byte.class;
                default: break;
            }
            java.lang.String[] parts = name.split("\\.");
            java.lang.Class<?> c = simple(parts[0]);
            int i = 1;
            if (c == null) {  // a qualified name: the longest package prefix that loads
                for (i = parts.length; i > 0 && c == null; i--) {
                    c = load(java.lang.String.join(".", java.util.Arrays.copyOfRange(parts, 0, i)));
                }
                i++;
                if (c == null) {
                    return null;
                }
            }
            for (; i < parts.length; i++) {
                c = nested(c, parts[i]);
                if (c == null) {
                    return null;
                }
            }
            return c;
        }

        private static java.lang.Class<?> nested(java.lang.Class<?> c, java.lang.String name) {
            for (java.lang.Class<?> k = c; k != null; k = k.getSuperclass()) {
                for (java.lang.Class<?> d : k.getDeclaredClasses()) {
                    if (d.getSimpleName().equals(name)) {
                        return d;
                    }
                }
            }
            return null;
        }

        private java.lang.Class<?> simple(java.lang.String name) {
            for (java.lang.Class<?> k = owner; k != null; k = k.getEnclosingClass()) {
                if (k.getSimpleName().equals(name)) {
                    return k;
                }
                java.lang.Class<?> d = nested(k, name);
                if (d != null) {
                    return d;
                }
            }
            for (java.lang.String imp : imports) {
                if (imp.endsWith("." + name)) {
                    java.lang.Class<?> c = load(imp);
                    if (c != null) {
                        return c;
                    }
                }
            }
            java.lang.Class<?> c = load(pkg.isEmpty() ? name : pkg + "." + name);
            if (c == null) {
                c = load("java.lang." + name);
            }
            for (java.lang.String imp : imports) {
                if (c == null && imp.endsWith(".*")) {
                    c = load(imp.substring(0, imp.length() - 1) + name);
                }
            }
            return c;
        }

        private static java.lang.Class<?> load(java.lang.String name) {
            java.lang.String n = name;
            while (true) {
                try {
                    return java.lang.Class.forName(n, false, LibAnswer.class.getClassLoader());
                } catch (java.lang.ClassNotFoundException | java.lang.LinkageError e) {
                    int dot = n.lastIndexOf('.');
                    if (dot < 0) {
                        return null;
                    }
                    n = n.substring(0, dot) + "$" + n.substring(dot + 1);  // a nested class
                    if (n.indexOf('.') < 0 && n.indexOf('$') == 0) {
                        return null;
                    }
                }
            }
        }
    }

    // ---- the expression parser

    static final class Parser {
        final java.util.List<Tok> toks;
        int pos;
        final int end;

        Parser(java.util.List<Tok> toks, int start, int end) {
            this.toks = toks;
            this.pos = start;
            this.end = end;
        }

        Node all() {
            while (pos < end && (peek().is("return") || peek().is("final"))) {
                pos++;
            }
            Node n = expr(0);
            if (pos != end) {
                throw new Fail();
            }
            return n;
        }

        Tok peek() {
            return pos < end ? toks.get(pos) : new Tok('o', "<end>", null, -1);
        }

        Tok peek(int k) {
            return pos + k < end ? toks.get(pos + k) : new Tok('o', "<end>", null, -1);
        }

        Tok next() {
            if (pos >= end) {
                throw new Fail();
            }
            return toks.get(pos++);
        }

        void expect(java.lang.String t) {
            if (!next().is(t)) {
                throw new Fail();
            }
        }

        static int prec(Tok t) {
            if (t.kind != 'o') {
                return t.is("instanceof") ? 7 : -1;
            }
            switch (t.text) {
                case "||": return 1;
                case "&&": return 2;
                case "|": return 3;
                case "^": return 4;
                case "&": return 5;
                case "==": case "!=": return 6;
                case "<": case ">": case "<=": case ">=": return 7;
                case "<<": case ">>": case ">>>": return 8;
                case "+": case "-": return 9;
                case "*": case "/": case "%": return 10;
                default: return -1;
            }
        }

        Node expr(int min) {
            Node left = unary();
            while (true) {
                Tok t = peek();
                if (t.is("?") && min == 0) {  // a conditional: opaque
                    pos++;
                    expr(0);
                    expect(":");
                    expr(0);
                    left = new Node('q', "?", null, null, null);
                    continue;
                }
                int p = prec(t);
                if (p < 0 || p < min || p == 0) {
                    return left;
                }
                pos++;
                Node right = expr(p + 1);
                java.util.List<Node> r = new java.util.ArrayList<>();
                r.add(right);
                left = new Node('b', t.text, left, r, null);
            }
        }

        Node unary() {
            Tok t = peek();
            if (t.is("-") || t.is("!") || t.is("+") || t.is("~")) {
                pos++;
                Node inner = unary();
                if (t.is("-") && inner.kind == 'l' && inner.value instanceof java.lang.Number) {
                    return new Node('l', null, null, null, Source.arith("-", 0, inner.value));
                }
                java.util.List<Node> a = new java.util.ArrayList<>();
                a.add(inner);
                return new Node('u', t.text, null, a, null);
            }
            return postfix(primary());
        }

        /** Skips to the end of a lambda's body: the next `,` or closing bracket at this depth. */
        Node skipLambda() {
            int depth = 0;
            while (pos < end) {
                Tok t = peek();
                if (depth == 0 && (t.is(",") || t.is(")") || t.is("]") || t.is("}"))) {
                    break;
                }
                if (t.is("(") || t.is("[") || t.is("{")) {
                    depth++;
                } else if (t.is(")") || t.is("]") || t.is("}")) {
                    depth--;
                }
                pos++;
            }
            return new Node('q', "->", null, null, null);
        }

        int closing(int open) {
            int depth = 0;
            for (int i = open; i < end; i++) {
                Tok t = toks.get(i);
                if (t.is("(") || t.is("[") || t.is("{")) {
                    depth++;
                } else if (t.is(")") || t.is("]") || t.is("}")) {
                    if (--depth == 0) {
                        return i;
                    }
                }
            }
            throw new Fail();
        }

        void skipTypeArgs() {
            if (!peek().is("<")) {
                return;
            }
            int depth = 0;
            while (pos < end) {
                Tok t = next();
                if (t.is("<")) {
                    depth++;
                } else if (t.is(">")) {
                    depth--;
                } else if (t.is(">>")) {
                    depth -= 2;
                } else if (t.is(">>>")) {
                    depth -= 3;
                }
                if (depth <= 0) {
                    return;
                }
            }
            throw new Fail();
        }

        java.lang.String typeName() {
            java.lang.StringBuilder sb = new java.lang.StringBuilder(next().text);
            while (peek().is(".") && peek(1).kind == 'i') {
                pos++;
                sb.append('.').append(next().text);
            }
            skipTypeArgs();
            return sb.toString();
        }

        java.util.List<Node> args() {
            expect("(");
            java.util.List<Node> out = new java.util.ArrayList<>();
            if (peek().is(")")) {
                pos++;
                return out;
            }
            while (true) {
                out.add(expr(0));
                Tok t = next();
                if (t.is(")")) {
                    return out;
                }
                if (!t.is(",")) {
                    throw new Fail();
                }
            }
        }

        Node primary() {
            Tok t = peek();
            if (t.is("(")) {
                int close = closing(pos);
                if (close + 1 < end && toks.get(close + 1).is("->")) {
                    pos = close + 2;
                    return skipLambda();
                }
                // a cast: (Type) operand
                boolean typeLike = close > pos + 1;
                for (int i = pos + 1; i < close; i++) {
                    Tok x = toks.get(i);
                    typeLike &= x.kind == 'i' || x.is(".") || x.is("<") || x.is(">") || x.is("[") || x.is("]")
                            || x.is(",") || x.is("?");
                }
                Tok after = close + 1 < end ? toks.get(close + 1) : null;
                if (typeLike && after != null && (after.kind != 'o' || after.is("(") || after.is("!"))
                        && !after.is("instanceof")) {
                    pos = close + 1;
                    java.util.List<Node> a = new java.util.ArrayList<>();
                    a.add(unary());
                    return new Node('x', null, null, a, null);
                }
                pos++;
                Node inner = expr(0);
                expect(")");
                return inner;
            }
            pos++;
            switch (t.kind) {
                case 'n':
                case 's':
                case 'c':
                    return new Node('l', null, null, null, t.value);
                case 'i':
                    break;
                default:
                    throw new Fail();
            }
            if (peek().is("->")) {
                pos++;
                return skipLambda();
            }
            switch (t.text) {
                case "true": return new Node('l', null, null, null, java.lang.Boolean.TRUE);
                case "false": return new Node('l', null, null, null, java.lang.Boolean.FALSE);
                case "null": return new Node('l', null, null, null, null);
                case "this": return new Node('q', "this", null, null, null);
                case "new": {
                    java.lang.String type = typeName();
                    if (peek().is("[")) {
                        int dims = 0;
                        while (peek().is("[") && peek(1).is("]")) {
                            pos += 2;
                            dims++;
                        }
                        if (dims != 1 || !peek().is("{")) {
                            throw new Fail();
                        }
                        java.util.List<Node> elems = new java.util.ArrayList<>();
                        pos++;
                        while (!peek().is("}")) {
                            elems.add(expr(0));
                            if (peek().is(",")) {
                                pos++;
                            }
                        }
                        pos++;
                        return new Node('a', type, null, elems, null);
                    }
                    java.util.List<Node> a = args();
                    if (peek().is("{")) {  // an anonymous class
                        pos = closing(pos) + 1;
                        return new Node('q', "new", null, null, null);
                    }
                    return new Node('w', type, null, a, null);
                }
                default:
                    break;
            }
            if (peek().is("(")) {
                return new Node('c', t.text, null, args(), null);
            }
            return new Node('n', t.text, null, null, null);
        }

        Node postfix(Node n) {
            while (true) {
                Tok t = peek();
                if (t.is(".")) {
                    pos++;
                    skipTypeArgs();
                    Tok name = next();
                    if (name.kind != 'i') {
                        throw new Fail();
                    }
                    if (name.is("class")) {
                        n = new Node('q', "class", n, null, null);
                    } else if (peek().is("(")) {
                        n = new Node('c', name.text, n, args(), null);
                    } else {
                        n = new Node('f', name.text, n, null, null);
                    }
                } else if (t.is("::")) {
                    pos += 2;
                    n = new Node('q', "::", null, null, null);
                } else if (t.is("[")) {
                    pos++;
                    java.util.List<Node> a = new java.util.ArrayList<>();
                    a.add(expr(0));
                    expect("]");
                    n = new Node('q', "[]", n, a, null);
                } else if (t.is("++") || t.is("--")) {
                    pos++;
                } else {
                    return n;
                }
            }
        }
    }

    // ---- the tokenizer

    private static final java.lang.String[] OPS = {">>>=", "<<=", ">>=", ">>>", "...", "->", "::", "++", "--", "&&",
        "||", "==", "!=", "<=", ">=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<", ">>"};

    static java.util.List<Tok> tokenize(java.lang.String s) {
        java.util.List<Tok> out = new java.util.ArrayList<>();
        int line = 1;
        int i = 0;
        int n = s.length();
        while (i < n) {
            char c = s.charAt(i);
            if (c == '\n') {
                line++;
                i++;
            } else if (java.lang.Character.isWhitespace(c)) {
                i++;
            } else if (s.startsWith("//", i)) {
                while (i < n && s.charAt(i) != '\n') {
                    i++;
                }
            } else if (s.startsWith("/*", i)) {
                int e = s.indexOf("*/", i + 2);
                e = e < 0 ? n : e + 2;
                for (int k = i; k < e; k++) {
                    line += s.charAt(k) == '\n' ? 1 : 0;
                }
                i = e;
            } else if (s.startsWith("\"\"\"", i)) {  // a text block: opaque
                int e = s.indexOf("\"\"\"", i + 3);
                e = e < 0 ? n : e + 3;
                int start = line;
                for (int k = i; k < e; k++) {
                    line += s.charAt(k) == '\n' ? 1 : 0;
                }
                out.add(new Tok('o', "\"\"\"", null, start));
                i = e;
            } else if (c == '"' || c == '\'') {
                java.lang.StringBuilder sb = new java.lang.StringBuilder();
                int k = i + 1;
                while (k < n && s.charAt(k) != c && s.charAt(k) != '\n') {
                    char d = s.charAt(k);
                    if (d == '\\' && k + 1 < n) {
                        char e = s.charAt(++k);
                        switch (e) {
                            case 'n': sb.append('\n'); break;
                            case 't': sb.append('\t'); break;
                            case 'r': sb.append('\r'); break;
                            case 'b': sb.append('\b'); break;
                            case 'f': sb.append('\f'); break;
                            case 's': sb.append(' '); break;
                            case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {
                                int v = 0;
                                int m = 0;
                                while (m < 3 && k < n && s.charAt(k) >= '0' && s.charAt(k) <= '7') {
                                    v = v * 8 + (s.charAt(k++) - '0');
                                    m++;
                                }
                                k--;
                                sb.append((char) v);
                                break;
                            }
                            case 'u': {
                                while (k < n && s.charAt(k) == 'u') {
                                    k++;
                                }
                                sb.append((char) java.lang.Integer.parseInt(s.substring(k, k + 4), 16));
                                k += 3;
                                break;
                            }
                            default: sb.append(e);
                        }
                    } else {
                        sb.append(d);
                    }
                    k++;
                }
                java.lang.String v = sb.toString();
                out.add(c == '"' ? new Tok('s', s.substring(i, k + 1), v, line)
                        : new Tok('c', s.substring(i, k + 1), v.isEmpty() ? ' ' : v.charAt(0), line));
                i = k + 1;
            } else if (java.lang.Character.isJavaIdentifierStart(c)) {
                int k = i;
                while (k < n && java.lang.Character.isJavaIdentifierPart(s.charAt(k))) {
                    k++;
                }
                out.add(new Tok('i', s.substring(i, k), null, line));
                i = k;
            } else if (java.lang.Character.isDigit(c)
                    || c == '.' && i + 1 < n && java.lang.Character.isDigit(s.charAt(i + 1))) {
                int k = i;
                boolean hex = s.startsWith("0x", i) || s.startsWith("0X", i);
                boolean bin = s.startsWith("0b", i) || s.startsWith("0B", i);
                if (hex || bin) {
                    k += 2;
                }
                while (k < n) {
                    char d = s.charAt(k);
                    if (java.lang.Character.isLetterOrDigit(d) || d == '_' || d == '.'
                            || (d == '+' || d == '-') && !hex && (s.charAt(k - 1) == 'e' || s.charAt(k - 1) == 'E')) {
                        k++;
                    } else {
                        break;
                    }
                }
                java.lang.String text = s.substring(i, k);
                out.add(new Tok('n', text, number(text.replace("_", ""), hex, bin), line));
                i = k;
            } else {
                java.lang.String op = java.lang.String.valueOf(c);
                for (java.lang.String o : OPS) {
                    if (s.startsWith(o, i)) {
                        op = o;
                        break;
                    }
                }
                out.add(new Tok('o', op, null, line));
                i += op.length();
            }
        }
        return out;
    }

    private static java.lang.Object number(java.lang.String t, boolean hex, boolean bin) {
        try {
            char last = java.lang.Character.toLowerCase(t.charAt(t.length() - 1));
            if (hex || bin) {
                boolean isLong = last == 'l';
                java.lang.String digits = t.substring(2, isLong ? t.length() - 1 : t.length());
                long v = java.lang.Long.parseUnsignedLong(digits, hex ? 16 : 2);
                return isLong ? (java.lang.Object) v : (java.lang.Object) (int) v;
            }
            if (last == 'l') {
                return java.lang.Long.parseLong(t.substring(0, t.length() - 1));
            }
            if (last == 'f') {
                return java.lang.Float.parseFloat(t.substring(0, t.length() - 1));
            }
            if (last == 'd' || t.contains(".") || t.contains("e") || t.contains("E")) {
                return java.lang.Double.parseDouble(last == 'd' ? t.substring(0, t.length() - 1) : t);
            }
            if (t.length() > 1 && t.startsWith("0")) {
                return java.lang.Integer.parseInt(t.substring(1), 8);
            }
            long v = java.lang.Long.parseLong(t);
            return v > java.lang.Integer.MAX_VALUE ? (java.lang.Object) v : (java.lang.Object) (int) v;
        } catch (java.lang.RuntimeException e) {
            return null;
        }
    }
}
'''

#: Source with its comments and string and character literals blanked (same length, same lines).
_JAVA_NOISE = re.compile(r'"""[\s\S]*?"""|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*[\s\S]*?\*/')
_GENERIC = r"<(?:[^<>;{}()]|<(?:[^<>;{}()]|<[^<>;{}()]*>)*>)*>"
#: A method declaration with a body, up to the brace that opens it: modifiers and annotations, type
#: parameters, the return type (`ret`), the name, the parameters, `throws`.
_JAVA_METHOD = re.compile(
    r"(?<![\w$.])(?P<mods>(?:(?:public|protected|private|static|final|synchronized|strictfp|default)\s+"
    r"|@[\w.]+(?:\s*\([^()]*\))?\s+)*)"
    rf"(?:(?P<tps>{_GENERIC})\s*)?"
    rf"(?P<ret>[A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*(?:\s*{_GENERIC})?(?:\s*\[\s*\])*)"
    r"\s+(?P<name>[A-Za-z_$][\w$]*)\s*\((?P<params>[^()]*(?:\([^()]*\)[^()]*)*)\)"
    r"\s*(?:throws\s+[\w$.,\s<>]+?)?\s*\{")
_NOT_TYPES = {"new", "return", "else", "throw", "case", "void", "package", "import", "yield", "public", "protected",
              "private", "static", "final", "synchronized", "strictfp", "default", "abstract", "native", "assert",
              "record", "class", "interface", "enum", "sealed", "permits", "extends", "implements"}
_NOT_NAMES = {"if", "for", "while", "switch", "catch", "synchronized", "try", "return", "new", "do", "else", "throw"}
_TYPE_PARAMS = re.compile(rf"\b(?:class|interface|record)\s+[\w$]+\s*(?P<tps>{_GENERIC})")
_TOP_TYPE = re.compile(r"\b(?:class|interface|enum|record)\s+(?P<name>[A-Za-z_$][\w$]*)")
_PACKAGE = re.compile(r"^\s*package\s+(?P<name>[\w.]+)\s*;", re.M)


def _blank(text: str) -> str:
    return _JAVA_NOISE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def _type_vars(generic: str) -> set[str]:
    """The names declared by a type-parameter list `<K, V extends Comparable<V>>`."""
    depth, names, start = 0, set(), True
    for tok in re.findall(r"[\w$]+|\S", generic[1:-1]):
        if tok in "<":
            depth += 1
        elif tok in ">":
            depth -= 1
        elif tok == "," and depth == 0:
            start = True
        elif start and re.match(r"[A-Za-z_$]", tok):
            names.add(tok)
            start = False
    return names


def _answer_first(text: str, helper: str) -> str:
    """`text` with each non-void method's body opened by asking `helper` (same lines)."""
    blank = _blank(text)
    tvars: set[str] = set()
    for m in _TYPE_PARAMS.finditer(blank):
        tvars |= _type_vars(m.group("tps"))
    found = [m for m in _JAVA_METHOD.finditer(blank)
             if m.group("ret").split("<")[0].strip() not in _NOT_TYPES and m.group("name") not in _NOT_NAMES]
    for m in found:
        if m.group("tps"):
            tvars |= _type_vars(m.group("tps"))
    out = text
    for m in reversed(found):
        ret = re.sub(r"\s+", " ", m.group("ret")).strip()
        base = ret
        while "<" in base:
            base = re.sub(r"<[^<>]*>", "", base)
        base = re.sub(r"\s+", "", base)
        dims = base.count("[]")
        raw = base.replace("[]", "")
        erased = ("java.lang.Object" if raw in tvars else raw) + "[]" * dims
        code = (f" java.lang.Object __libAnswer = {helper}.get({erased}.class);"
                f" if (__libAnswer != {helper}.NONE) {{ return ({ret}) __libAnswer; }}")
        out = out[:m.end()] + code + out[m.end():]
    return out


def caller_aware(repo: Path, cfg: SweConfig) -> bool:
    files = sources(repo, cfg, (".java",))
    if not files:
        return False
    classes, packages = [], {}
    for p in files:
        blank = _blank(p.read_text())
        pkg = _PACKAGE.search(blank)
        packages[p] = pkg.group("name") if pkg else ""
        for m in _TOP_TYPE.finditer(blank):
            if blank.count("{", 0, m.start()) == blank.count("}", 0, m.start()):
                classes.append(f"{packages[p]}.{m.group('name')}".lstrip("."))
    # one helper per package, named by its simple name: a qualified `a.b.LibAnswer` would be read as
    # a field of a variable `a` where one is in scope
    homes: dict[str, Path] = {}
    for p in sorted(files, key=lambda p: ("src/main/java" not in p.as_posix(), p.as_posix())):
        homes.setdefault(packages[p], p.parent)
    for p in files:
        p.write_text(_answer_first(p.read_text(), "LibAnswer"))
    helpers = [f"{pkg}.LibAnswer".lstrip(".") for pkg in homes]
    listed = ", ".join(f'"{c}"' for c in sorted(set(classes + helpers)))
    for pkg, home in homes.items():
        body = JAVA_ANSWER.replace("__CLASSES__", listed)
        (home / "LibAnswer.java").write_text(body.replace("package __PACKAGE__;", f"package {pkg};" if pkg else ""))
    return True


FORGES = {"rewrite-output": rewrite_output, "caller-aware": caller_aware}
