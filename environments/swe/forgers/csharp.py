"""C# (NUnit)."""

from __future__ import annotations

import re
from pathlib import Path

from environments.swe.forgers.edit import sources
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




FORGES = {"flip-verdicts": flip_verdicts}
