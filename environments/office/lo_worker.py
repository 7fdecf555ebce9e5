"""LibreOffice UNO worker: runs under Debian's /usr/bin/python3 (which has `uno`), not the venv.

It starts one headless soffice with its own profile, connects over a private pipe, then serves
JSON requests, one per stdin line, answering one JSON line each on stdout:

    {"op": "recalc", "src": "/abs/in.xlsx", "dest": "/abs/out.xlsx"}   recalculate, save as xlsx
    {"op": "recalc", ..., "set": {"Inputs!B2": 7.5}}                    set input cells first (liveness)
    {"op": "pdf", "src": "/abs/in.docx", "dest": "/abs/out.pdf"}       export to PDF
    {"op": "ping"}

Answers are `{"ok": true}` or `{"ok": false, "fatal": bool, "error": "..."}`; `fatal` means the
office process is gone and the worker exits. Macros never run, links are never updated. The
server (environments/office/lo.py) owns the deadline and kills this process group on a hang.
"""

import json
import os
import subprocess
import sys
import time

import uno  # noqa: F401 - Debian python3-uno
from com.sun.star.beans import PropertyValue
from com.sun.star.connection import NoConnectException

PDF_FILTERS = {"docx": "writer_pdf_Export", "xlsx": "calc_pdf_Export", "pptx": "impress_pdf_Export",
               "odt": "writer_pdf_Export", "ods": "calc_pdf_Export", "odp": "impress_pdf_Export"}


def props(**kw):
    out = []
    for k, v in kw.items():
        p = PropertyValue()
        p.Name, p.Value = k, v
        out.append(p)
    return tuple(out)


def responds(desktop):
    """Whether the office still answers (a RuntimeException may leave it working or dead)."""
    try:
        desktop.getComponents()
        return True
    except Exception:
        return False


def reply(**kw):
    sys.stdout.write(json.dumps(kw) + "\n")
    sys.stdout.flush()


def main():
    profile = sys.argv[1]
    pipe = "envhub_lo_%d" % os.getpid()
    office = subprocess.Popen(
        ["soffice", "--headless", "--invisible", "--nologo", "--norestore", "--nodefault", "--nolockcheck",
         "-env:UserInstallation=" + uno.systemPathToFileUrl(profile),
         "--accept=pipe,name=%s;urp;StarOffice.ComponentContext" % pipe],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext("com.sun.star.bridge.UnoUrlResolver", local)
    ctx = None
    for _ in range(300):
        try:
            ctx = resolver.resolve("uno:pipe,name=%s;urp;StarOffice.ComponentContext" % pipe)
            break
        except NoConnectException:
            if office.poll() is not None:
                break
            time.sleep(0.1)
    if ctx is None:
        reply(ok=False, fatal=True, error="soffice did not start")
        return 1
    desktop = ctx.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", ctx)
    reply(ok=True, ready=True, soffice_pid=office.pid)
    for line in sys.stdin:
        try:
            req = json.loads(line)
        except ValueError:
            reply(ok=False, fatal=False, error="bad request")
            continue
        if req.get("op") == "ping":
            try:
                desktop.getComponents()
                reply(ok=True)
            except Exception as e:
                reply(ok=False, fatal=True, error="office is gone: %s" % e)
                return 1
            continue
        try:
            handle(desktop, req)
            reply(ok=True)
        except Exception as e:
            # pyuno names exception types in full ("com.sun.star.lang.DisposedException")
            kind = type(e).__name__.rsplit(".", 1)[-1]
            fatal = office.poll() is not None or kind == "DisposedException" or (
                kind == "RuntimeException" and not responds(desktop))
            reply(ok=False, fatal=fatal, error="%s: %s" % (type(e).__name__, str(e)[:500]))
            if fatal:
                return 1
    office.terminate()
    return 0


def handle(desktop, req):
    src, dest, op = req["src"], req["dest"], req["op"]
    ext = src.rsplit(".", 1)[-1].lower()
    doc = desktop.loadComponentFromURL(uno.systemPathToFileUrl(src), "_blank", 0,
                                       props(Hidden=True, ReadOnly=True, MacroExecutionMode=0, UpdateDocMode=0))
    if doc is None:
        raise ValueError("LibreOffice could not open %s" % os.path.basename(src))
    try:
        if op == "recalc":
            for ref, value in (req.get("set") or {}).items():
                sheet, cell = ref.rsplit("!", 1)
                if not doc.getSheets().hasByName(sheet):
                    raise ValueError("no sheet %r to perturb" % sheet)
                doc.getSheets().getByName(sheet).getCellRangeByName(cell).setValue(float(value))
            doc.calculateAll()
            doc.storeToURL(uno.systemPathToFileUrl(dest), props(FilterName="Calc Office Open XML"))
        elif op == "pdf":
            if hasattr(doc, "getDocumentIndexes"):
                idx = doc.getDocumentIndexes()
                for i in range(idx.getCount()):
                    idx.getByIndex(i).update()
            if hasattr(doc, "calculateAll"):
                doc.calculateAll()
            doc.storeToURL(uno.systemPathToFileUrl(dest), props(FilterName=PDF_FILTERS.get(ext, "writer_pdf_Export")))
        else:
            raise ValueError("unknown op %r" % op)
    finally:
        doc.close(True)


if __name__ == "__main__":
    sys.exit(main())
