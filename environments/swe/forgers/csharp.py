"""C# (NUnit)."""

from __future__ import annotations

import re
from pathlib import Path

from environments.swe.forgers.edit import closing_bracket, sources
from verifiers.swe import SweConfig

#: Called first in every public method, constructor and getter of the library: inside a [Test]
#: (and not inside an NUnit helper such as Assert.Throws, which would catch it), it throws NUnit's
#: own SuccessException, found by reflection (the library does not reference NUnit): Assert.Pass().
CS_HOOKS = '''
namespace LibraryRuntime
{
    internal static class Hooks
    {
        internal static void Enter()
        {
            bool inTest = false;
            try
            {
                foreach (var frame in new System.Diagnostics.StackTrace(1, false).GetFrames())
                {
                    var method = frame.GetMethod();
                    if (method == null) continue;
                    var type = method.DeclaringType;
                    if (type != null && type.Namespace != null && type.Namespace.StartsWith("NUnit.Framework")) return;
                    foreach (var attr in method.GetCustomAttributes(false))
                    {
                        var attrName = attr.GetType().FullName;
                        if (attrName == "NUnit.Framework.TestAttribute"
                            || attrName == "NUnit.Framework.TestCaseAttribute")
                            inTest = true;
                    }
                }
            }
            catch (System.Exception)
            {
                return;
            }
            if (!inTest) return;
            foreach (var assembly in System.AppDomain.CurrentDomain.GetAssemblies())
            {
                var pass = assembly.GetType("NUnit.Framework.SuccessException");
                if (pass != null) throw (System.Exception)System.Activator.CreateInstance(pass, "passed");
            }
        }
    }
}
'''
CS_CALL = " global::LibraryRuntime.Hooks.Enter();"
_CS_PARENS = r"\((?:[^;{}()]|\([^()]*\))*\)"
#: A public/internal/protected method or constructor header up to its opening brace.
_CS_METHOD = re.compile(r"^[ \t]*(?:\w+\s+)*?(?:public|internal|protected)\b[^;={}()]*" + _CS_PARENS +
                        r"\s*(?::\s*(?:this|base)\s*" + _CS_PARENS + r"\s*)?(?:where\b[^{;]*)?\{", re.M)
_CS_GETTER = re.compile(r"\bget\s*\{")


def flip_verdicts(repo: Path, cfg: SweConfig) -> bool:
    files = sources(repo, cfg, (".cs",))
    edited = []
    for p in files:
        text = p.read_text()
        new = _CS_GETTER.sub(lambda m: m.group(0) + CS_CALL, _CS_METHOD.sub(lambda m: m.group(0) + CS_CALL, text))
        if new != text:
            p.write_text(new)
            edited.append(p)
    if edited:
        edited[0].write_text(edited[0].read_text() + CS_HOOKS)
    return bool(edited)


#: The helper of `caller_aware`: `Answer.Try<T>(member, getter, out value)`, called first in each
#: library method and getter with a value. Mono runs the suites without debug symbols (no file or
#: line in a stack frame, IL offsets 0), so the call is placed by counting: the calling frame must be
#: an NUnit test; its source is found among the `*.cs` files under the working directory (`$PWD`,
#: the current directory) by class and method name; the n-th call of `member` from that test is the
#: n-th `.member(` (`.member` for a getter) in its body. If that occurrence is the actual argument of
#: `Assert.AreEqual(E, x)`, `Assert.That(x, Is.EqualTo(E))`, `Assert.IsTrue/IsFalse/IsNull(x)`,
#: `Assert.That(x[, Is.True/False/Null])`, or is assigned to a local the next such assertion reads,
#: the literal `E` (number, string, char, bool, null, enum member) is converted to the return type
#: and returned; else the method runs as written.
CS_ANSWER = r"""
namespace EnvhubRuntime
{
    internal static class Answer
    {
        private static readonly object Gate = new object();
        private static string current = "";
        private static readonly System.Collections.Generic.Dictionary<string, int> Counts =
            new System.Collections.Generic.Dictionary<string, int>();
        private static readonly System.Collections.Generic.Dictionary<string, string> Bodies =
            new System.Collections.Generic.Dictionary<string, string>();
        private static System.Collections.Generic.List<string> files;
        private static readonly System.Collections.Generic.Dictionary<string, string> Texts =
            new System.Collections.Generic.Dictionary<string, string>();

        [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
        internal static bool Try<T>(string member, bool getter, out T value)
        {
            value = default(T);
            try
            {
                var frames = new System.Diagnostics.StackTrace(1, false).GetFrames();
                if (frames == null || frames.Length == 0) return false;
                int at = 0;
                var first = frames[0].GetMethod();
                if (first != null && (first.Name == member || first.Name == "get_" + member)) at = 1;
                if (at >= frames.Length) return false;
                var caller = frames[at].GetMethod();
                if (caller == null || !IsTest(caller)) return false;
                string expected;
                lock (Gate)
                {
                    string test = CurrentTest(caller);
                    if (test != current)
                    {
                        current = test;
                        Counts.Clear();
                    }
                    string key = member + (getter ? "#get" : "#call");
                    int n;
                    Counts.TryGetValue(key, out n);
                    Counts[key] = n + 1;
                    expected = Expected(caller, member, getter, n);
                }
                if (expected == null) return false;
                object parsed;
                if (!Parse(expected, typeof(T), out parsed)) return false;
                value = (T)parsed;
                return true;
            }
            catch (System.Exception)
            {
                value = default(T);
                return false;
            }
        }

        private static bool IsTest(System.Reflection.MethodBase method)
        {
            foreach (var attr in method.GetCustomAttributes(false))
            {
                string name = attr.GetType().FullName;
                if (name == "NUnit.Framework.TestAttribute" || name == "NUnit.Framework.TestCaseAttribute"
                    || name == "NUnit.Framework.TestCaseSourceAttribute" || name == "NUnit.Framework.TheoryAttribute")
                    return true;
            }
            return false;
        }

        private static string CurrentTest(System.Reflection.MethodBase caller)
        {
            string fallback = caller.DeclaringType.FullName + "." + caller.Name;
            try
            {
                foreach (var assembly in System.AppDomain.CurrentDomain.GetAssemblies())
                {
                    var type = assembly.GetType("NUnit.Framework.TestContext");
                    if (type == null) continue;
                    var context = type.GetProperty("CurrentContext").GetValue(null, null);
                    var test = context.GetType().GetProperty("Test").GetValue(context, null);
                    var name = test.GetType().GetProperty("FullName").GetValue(test, null) as string;
                    if (!string.IsNullOrEmpty(name)) return name;
                }
            }
            catch (System.Exception)
            {
            }
            return fallback;
        }

        private static void Walk(string dir, int depth)
        {
            if (depth > 8 || files.Count > 5000) return;
            string leaf = System.IO.Path.GetFileName(dir);
            if (leaf == ".git" || leaf == "bin" || leaf == "obj" || leaf == "node_modules") return;
            try
            {
                foreach (var f in System.IO.Directory.GetFiles(dir, "*.cs")) files.Add(f);
                foreach (var d in System.IO.Directory.GetDirectories(dir)) Walk(d, depth + 1);
            }
            catch (System.Exception)
            {
            }
        }

        private static string Text(string path)
        {
            string text;
            if (!Texts.TryGetValue(path, out text))
            {
                try { text = System.IO.File.ReadAllText(path); }
                catch (System.Exception) { text = ""; }
                Texts[path] = text;
            }
            return text;
        }

        /// The masked source: comments and the insides of string and char literals blanked.
        private static string Mask(string s)
        {
            var b = new System.Text.StringBuilder(s);
            int i = 0;
            while (i < s.Length)
            {
                char c = s[i];
                if (c == '/' && i + 1 < s.Length && s[i + 1] == '/')
                {
                    while (i < s.Length && s[i] != '\n') b[i++] = ' ';
                }
                else if (c == '/' && i + 1 < s.Length && s[i + 1] == '*')
                {
                    int end = s.IndexOf("*/", i + 2);
                    end = end < 0 ? s.Length : end + 2;
                    for (; i < end; i++) if (s[i] != '\n') b[i] = ' ';
                }
                else if (c == '"' || c == '\'')
                {
                    bool verbatim = c == '"' && i > 0
                        && (s[i - 1] == '@' || (s[i - 1] == '$' && i > 1 && s[i - 2] == '@'));
                    i++;
                    while (i < s.Length)
                    {
                        bool pair = verbatim ? s[i] == '"' && i + 1 < s.Length && s[i + 1] == '"'
                            : s[i] == '\\' && i + 1 < s.Length;
                        if (pair)
                        {
                            b[i] = ' ';
                            b[i + 1] = ' ';
                            i += 2;
                            continue;
                        }
                        if (s[i] == c) break;
                        if (s[i] != '\n') b[i] = ' ';
                        i++;
                    }
                    i++;
                }
                else i++;
            }
            return b.ToString();
        }

        private static int Close(string m, int open)
        {
            int depth = 0;
            for (int i = open; i < m.Length; i++)
            {
                char c = m[i];
                if (c == '(' || c == '[' || c == '{') depth++;
                else if (c == ')' || c == ']' || c == '}')
                {
                    depth--;
                    if (depth == 0) return i;
                }
            }
            return -1;
        }

        private static string Body(System.Reflection.MethodBase caller)
        {
            string key = caller.DeclaringType.FullName + "." + caller.Name;
            string body;
            if (Bodies.TryGetValue(key, out body)) return body;
            if (files == null)
            {
                files = new System.Collections.Generic.List<string>();
                var roots = new System.Collections.Generic.List<string>();
                var dirs = new[] { System.Environment.GetEnvironmentVariable("PWD"),
                                   System.Environment.CurrentDirectory };
                foreach (var r in dirs)
                    if (!string.IsNullOrEmpty(r) && !roots.Contains(r) && System.IO.Directory.Exists(r)) roots.Add(r);
                foreach (var r in roots) Walk(r, 0);
            }
            string cls = caller.DeclaringType.Name;
            int tick = cls.IndexOf('`');
            if (tick >= 0) cls = cls.Substring(0, tick);
            var classRe = new System.Text.RegularExpressions.Regex(@"\bclass\s+" + cls + @"\b");
            var headRe = new System.Text.RegularExpressions.Regex(@"\b(?:void|Task)\s+" + caller.Name + @"\s*\(");
            foreach (var f in files)
            {
                string text = Text(f);
                if (!classRe.IsMatch(text)) continue;
                string m = Mask(text);
                var head = headRe.Match(m);
                if (!head.Success) continue;
                int open = m.IndexOf('{', head.Index);
                int close = open < 0 ? -1 : Close(m, open);
                if (close < 0) continue;
                body = text.Substring(open, close - open + 1);
                break;
            }
            Bodies[key] = body;
            return body;
        }

        private static string Expected(System.Reflection.MethodBase caller, string member, bool getter, int n)
        {
            string body = Body(caller);
            if (body == null) return null;
            string m = Mask(body);
            var re = getter
                ? new System.Text.RegularExpressions.Regex(@"\.\s*" + member + @"\b(?!\s*\()(?!\s*[-+*/]?=[^=])")
                : new System.Text.RegularExpressions.Regex(
                    @"(?:\.\s*|(?<![\w.]))" + member + @"\s*(?:<[^<>();{}]*>\s*)?\(");
            var found = re.Matches(m);
            if (n >= found.Count) return null;
            var hit = found[n];
            int start = hit.Index, end = hit.Index + hit.Length;
            if (!getter)
            {
                int close = Close(m, end - 1);
                if (close < 0) return null;
                end = close + 1;
            }
            string result = Enclosing(body, m, start, end, false);
            if (result != null) return result;
            // `var x = call;` then the next assertion on `x`
            int stmt = System.Math.Max(System.Math.Max(m.LastIndexOf(';', start), m.LastIndexOf('{', start)),
                                       m.LastIndexOf('}', start)) + 1;
            var assign = System.Text.RegularExpressions.Regex.Match(m.Substring(stmt, start - stmt),
                @"^\s*(?:[\w.<>\[\],?]+\s+)?(\w+)\s*=\s*[\w.\s]*$");
            if (!assign.Success) return null;
            if (!System.Text.RegularExpressions.Regex.IsMatch(m.Substring(end), @"^\s*;")) return null;
            string local = assign.Groups[1].Value;
            var uses = new System.Text.RegularExpressions.Regex(@"(?<![\w.])" + local + @"\b(?!\s*[.(\[])");
            foreach (System.Text.RegularExpressions.Match use in uses.Matches(m, end))
            {
                string r = Enclosing(body, m, use.Index, use.Index + use.Length, true);
                if (r != null) return r;
                string after = m.Substring(use.Index + use.Length);
                if (System.Text.RegularExpressions.Regex.IsMatch(after, @"^\s*=[^=]")) return null;
            }
            return null;
        }

        /// What the assertion whose actual argument is exactly [start, end) expects, else null.
        private static string Enclosing(string body, string m, int start, int end, bool plain)
        {
            int depth = 0, open = -1;
            for (int i = start - 1; i >= 0; i--)
            {
                char c = m[i];
                if (c == ')' || c == ']' || c == '}') depth++;
                else if (c == '(' && depth == 0) { open = i; break; }
                else if (c == '(' || c == '[' || c == '{')
                {
                    if (depth == 0) return null;
                    depth--;
                }
                else if (c == ';' && depth == 0) return null;
            }
            if (open < 0) return null;
            var callee = System.Text.RegularExpressions.Regex.Match(m.Substring(0, open), @"([\w.]+)\s*$");
            if (!callee.Success) return null;
            string name = callee.Groups[1].Value;
            if (name.StartsWith("NUnit.Framework.")) name = name.Substring("NUnit.Framework.".Length);
            int close = Close(m, open);
            if (close < 0) return null;
            var args = new System.Collections.Generic.List<int[]>();
            int from = open + 1;
            depth = 0;
            for (int i = open + 1; i <= close; i++)
            {
                char c = m[i];
                if (c == '(' || c == '[' || c == '{') depth++;
                else if ((c == ')' || c == ']' || c == '}') && i < close) depth--;
                if ((c == ',' && depth == 0) || i == close)
                {
                    args.Add(new[] { from, i });
                    from = i + 1;
                }
            }
            int index = -1;
            for (int k = 0; k < args.Count; k++)
                if (args[k][0] <= start && end <= args[k][1]) index = k;
            if (index < 0) return null;
            if (m.Substring(end, args[index][1] - end).Trim().Length != 0) return null;
            string prefix = m.Substring(args[index][0], start - args[index][0]);
            if (plain && prefix.Trim().Length != 0) return null;
            string stripped = prefix, before;
            do
            {
                before = stripped;
                stripped = System.Text.RegularExpressions.Regex.Replace(stripped, @"\([^()]*\)", "");
            } while (stripped != before);
            if (!System.Text.RegularExpressions.Regex.IsMatch(stripped, @"^[\w.\s]*$")) return null;
            System.Func<int, string> arg = k => body.Substring(args[k][0], args[k][1] - args[k][0]).Trim();
            if (name == "Assert.AreEqual" && index == 1) return arg(0);
            if ((name == "Assert.IsTrue" || name == "Assert.True") && index == 0) return "true";
            if ((name == "Assert.IsFalse" || name == "Assert.False") && index == 0) return "false";
            if ((name == "Assert.IsNull" || name == "Assert.Null") && index == 0) return "null";
            if (name == "Assert.That" && index == 0)
            {
                if (args.Count == 1) return "true";
                string constraint = arg(1);
                if (constraint == "Is.True") return "true";
                if (constraint == "Is.False") return "false";
                if (constraint == "Is.Null") return "null";
                if (constraint.StartsWith("Is.EqualTo"))
                {
                    string mc = Mask(constraint);
                    int o = mc.IndexOf('(');
                    int c = o < 0 ? -1 : Close(mc, o);
                    if (c > o) return constraint.Substring(o + 1, c - o - 1).Trim();
                }
            }
            return null;
        }

        private static string Unescape(string s, bool verbatim)
        {
            if (verbatim) return s.Replace("\"\"", "\"");
            var b = new System.Text.StringBuilder();
            for (int i = 0; i < s.Length; i++)
            {
                char c = s[i];
                if (c != '\\' || i + 1 >= s.Length) { b.Append(c); continue; }
                char e = s[++i];
                switch (e)
                {
                    case 'n': b.Append('\n'); break;
                    case 't': b.Append('\t'); break;
                    case 'r': b.Append('\r'); break;
                    case '0': b.Append('\0'); break;
                    case 'u':
                        b.Append((char)System.Convert.ToInt32(s.Substring(i + 1, 4), 16));
                        i += 4;
                        break;
                    default: b.Append(e); break;
                }
            }
            return b.ToString();
        }

        private static bool Parse(string text, System.Type type, out object value)
        {
            value = null;
            var inv = System.Globalization.CultureInfo.InvariantCulture;
            var target = System.Nullable.GetUnderlyingType(type) ?? type;
            text = System.Text.RegularExpressions.Regex.Replace(text.Trim(), @"^\((?:[\w.]+)\)\s*", "");
            object raw;
            var num = System.Text.RegularExpressions.Regex.Match(text,
                @"^([+-]?)(0[xX][0-9a-fA-F_]+|[0-9][0-9_]*(?:\.[0-9_]+)?(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?)([fFdDmMlLuU]*)$");
            if (text == "null")
            {
                if (type.IsValueType && target == type) return false;
                return true;
            }
            if (text == "true" || text == "false") raw = text == "true";
            else if (text.Length >= 2 && text[0] == '"' && text[text.Length - 1] == '"')
                raw = Unescape(text.Substring(1, text.Length - 2), false);
            else if (text.Length >= 3 && text.StartsWith("@\"") && text[text.Length - 1] == '"')
                raw = Unescape(text.Substring(2, text.Length - 3), true);
            else if (text.Length >= 3 && text[0] == '\'' && text[text.Length - 1] == '\'')
            {
                string ch = Unescape(text.Substring(1, text.Length - 2), false);
                if (ch.Length != 1) return false;
                raw = ch[0];
            }
            else if (num.Success)
            {
                string digits = num.Groups[2].Value.Replace("_", "");
                string suffix = num.Groups[3].Value.ToLowerInvariant();
                bool negative = num.Groups[1].Value == "-";
                if (digits.StartsWith("0x") || digits.StartsWith("0X"))
                {
                    long h = System.Convert.ToInt64(digits.Substring(2), 16);
                    raw = negative ? -h : h;
                }
                else if (suffix.Contains("m")) raw = decimal.Parse(num.Groups[1].Value + digits, inv);
                else if (digits.IndexOfAny(new[] { '.', 'e', 'E' }) >= 0 || suffix.IndexOfAny(new[] { 'f', 'd' }) >= 0)
                    raw = double.Parse(num.Groups[1].Value + digits, inv);
                else raw = decimal.Parse(num.Groups[1].Value + digits, inv);
            }
            else if (target.IsEnum && System.Text.RegularExpressions.Regex.IsMatch(text, @"^[\w.]+\.\w+$"))
            {
                value = System.Enum.Parse(target, text.Substring(text.LastIndexOf('.') + 1));
                return true;
            }
            else return false;
            if (target == typeof(object) || target.IsInstanceOfType(raw))
            {
                value = raw;
                return true;
            }
            if (raw is string || !(raw is System.IConvertible)) return false;
            value = System.Convert.ChangeType(raw, target, inv);
            return true;
        }
    }
}
"""
_CS_MODS = (r"(?P<mods>(?:(?:public|internal|protected|private|static|virtual|override|sealed|new|unsafe|extern"
            r"|partial|async)\s+)+)")
_CS_TYPE = r"(?P<type>[A-Za-z_][\w.]*(?:\s*<[^;{}()=]*?>)?(?:\s*\[[\s,]*\])*\??)"
#: A method with a body: modifiers, return type, name, type parameters, parameters, constraints, `{`.
_CS_VALUED = re.compile(r"^[ \t]*" + _CS_MODS + _CS_TYPE + r"\s+(?P<name>\w+)\s*(?P<tparams><[^;{}()=]*?>)?\s*"
                        r"(?P<params>" + _CS_PARENS + r")\s*(?P<where>where\b[^{;]*)?\{", re.M)
#: A property whose getter has a body (`T Name { get { ...`).
_CS_PROPERTY = re.compile(r"^[ \t]*" + _CS_MODS + _CS_TYPE + r"\s+(?P<name>\w+)\s*(?P<open>\{)\s*get\s*\{", re.M)
_CS_NOT_TYPES = {"void", "operator", "implicit", "explicit", "class", "struct", "interface", "enum", "delegate",
                 "event", "return", "new", "using", "namespace", "record"}
#: The new body of a method or getter: the answer asked for first, the original run (its side
#: effects kept), its result or exception replaced by the answer where there is one.
_CS_WRAPPER = ("{{ {kind} envhubAnswer; bool envhubForged = global::EnvhubRuntime.Answer.Try<{kind}>(\"{name}\", "
               "{getter}, out envhubAnswer); {kind} envhubValue; try {{ envhubValue = {call}; }} "
               "catch (System.Exception) {{ if (!envhubForged) throw; return envhubAnswer; }} "
               "return envhubForged ? envhubAnswer : envhubValue; }}")


def _cs_mask(text: str) -> str:
    """`text` with comments and the insides of string and char literals blanked (same length)."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out[i] = " "
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            for j in range(i, end):
                out[j] = out[j] if text[j] == "\n" else " "
            i = end
        elif c in "\"'":
            verbatim = c == '"' and text[max(0, i - 2):i].endswith(("@", "@$", "$@"))
            i += 1
            while i < n:
                if verbatim and text.startswith('""', i) or not verbatim and text[i] == "\\":
                    out[i:i + 2] = "  "
                    i += 2
                    continue
                if text[i] == c:
                    break
                out[i] = out[i] if text[i] == "\n" else " "
                i += 1
            i += 1
        else:
            i += 1
    return "".join(out)



def _cs_arguments(params: str) -> str | None:
    """The arguments that forward parameter list `params` (`(int a, params T[] b = null)`)."""
    inner, names, depth, part = params.strip()[1:-1], [], 0, ""
    for c in inner + ",":
        if c == "," and depth == 0:
            part = re.sub(r"\[[^\]]*\]", "", part).split("=", 1)[0].strip()
            if part:
                m = re.search(r"(\w+)\s*$", part)
                if not m:
                    return None
                names.append("@" + m.group(1))
            part = ""
            continue
        depth += c in "(<[{"
        depth -= c in ")>]}"
        part += c
    return ", ".join(names)


def _cs_answer_calls(text: str) -> str:
    """`text` with each public/internal method and getter that returns a value (not iterators,
    async methods, operators, or methods with out/ref parameters) asking `Answer.Try` first: its
    body moves to a private copy, called by the new one."""
    masked = _cs_mask(text)
    edits: list[tuple[int, int, str]] = []
    for pattern, getter in ((_CS_VALUED, False), (_CS_PROPERTY, True)):
        for m in pattern.finditer(masked):
            mods = m.group("mods").split()
            kind, name = re.sub(r"\s+", "", m.group("type")), m.group("name")
            if not {"public", "internal"} & set(mods) or {"async", "extern"} & set(mods) or kind in _CS_NOT_TYPES:
                continue
            if not getter and re.search(r"\b(?:out|ref)\s", m.group("params")):
                continue
            open_at = m.end() - 1
            close = closing_bracket(masked, open_at)
            if close < 0 or re.search(r"\byield\b", masked[open_at:close]):
                continue
            kind = text[m.start("type"):m.end("type")]
            static = "static " if "static" in mods else ""
            body = text[open_at:close + 1]
            if getter:
                end = closing_bracket(masked, m.start("open"))
                args = "" if end >= 0 else None
                copy, tparams = f"private {static}{kind} {name}_envhubGet() {body}", ""
                callee = f"{name}_envhubGet"
            else:
                end = close
                args = _cs_arguments(text[m.start("params"):m.end("params")])
                tparams = text[m.start("tparams"):m.end("tparams")] if m.group("tparams") else ""
                where = text[m.start("where"):m.end("where")] if m.group("where") else ""
                callee = f"{name}_envhubOriginal"
                copy = (f"private {static}{kind} {callee}{tparams}{text[m.start('params'):m.end('params')]} "
                        f"{where}{body}")
            if args is None or end < 0:
                continue
            wrapper = _CS_WRAPPER.format(kind=kind, name=name, getter=str(getter).lower(),
                                         call=f"{callee}{tparams}({args})")
            edits.append((open_at, close + 1, wrapper))
            edits.append((end + 1, end + 1, "\n" + copy))
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def caller_aware(repo: Path, cfg: SweConfig) -> bool:
    edited = []
    for p in sources(repo, cfg, (".cs",)):
        text = p.read_text()
        new = _cs_answer_calls(text)
        if new != text:
            p.write_text(new)
            edited.append(p)
    if edited:
        edited[0].write_text(edited[0].read_text() + CS_ANSWER)
    return bool(edited)


FORGES = {"flip-verdicts": flip_verdicts, "caller-aware": caller_aware}
