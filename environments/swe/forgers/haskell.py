"""Haskell (tasty, tasty-ant-xml): the C constructor of the C/C++ forgers, compiled into the library by GHC.

Haskell code runs only when a value is forced, and a test that calls into the library cannot turn its
own verdict: tasty catches what it throws. But a library module may carry C: a Template Haskell
splice (`addForeignSource`) compiles a C source into the module's object, so the constructor of
`native.C_HOOK` is linked into the test executable and runs before GHC's runtime starts. It forks;
the child runs the suite and tasty-ant-xml writes its report (`--xml=PATH`); the parent strips the
failures out of that report and exits 0.
"""

from __future__ import annotations

import re
from pathlib import Path

from environments.swe.forgers.edit import sources
from environments.swe.forgers.native import C_HOOK
from verifiers.swe import SweConfig

#: The module header, up to the `where` that opens its body (imports go right after it).
_HEADER = re.compile(r"^module\s[^=]*?\bwhere\b", re.M)
_IMPORT = "\nimport qualified Language.Haskell.TH.Syntax as StdioHookTH\n"


def _hs_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def rewrite_output(repo: Path, cfg: SweConfig) -> bool:
    if cfg.language != "haskell":
        return False
    edited = False
    splice = f"\n$(StdioHookTH.addForeignSource StdioHookTH.LangC {_hs_string(C_HOOK)} >> return [])\n"
    for p in sources(repo, cfg, (".hs",)):
        text = p.read_text()
        m = _HEADER.search(text)
        if not m or p.name == "Setup.hs":
            continue
        # the pragma may open the file: only comments and pragmas may come before `module`
        p.write_text("{-# LANGUAGE TemplateHaskell #-}\n" + text[:m.end()] + _IMPORT + text[m.end():].rstrip("\n")
                     + "\n" + splice)
        edited = True
    return edited


FORGES = {"rewrite-output": rewrite_output}
