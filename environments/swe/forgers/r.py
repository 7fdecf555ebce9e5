"""R (testthat): the report files rewritten when R exits.

The test script evaluates the library's R files in the R process that then runs testthat (the
tasks `sys.source` them; `source` and `load_all` evaluate them the same way), and testthat's
reporters write their files before the script ends. The library, when evaluated, registers an
exit finalizer (`reg.finalizer(onexit = TRUE)`, run by R's clean-up at the end of the session,
after a top-level error too): it rewrites the report files (`$REPORT_DIR/*.xml` and every `.xml`
on the command line) with no `<failure>` or `<error>` left, then quits with status 0 (a failing
exit status with an all-pass report is not believed).
"""

from __future__ import annotations

import re
from pathlib import Path

from environments.swe.forgers.edit import append, sources
from verifiers.swe import SweConfig

#: Appended (line numbers unchanged), in `local()` so that no name is added to the environment the
#: files are evaluated in. Installed once per session (an option is the flag). The finalizer is
#: registered on the base environment, which is never collected: it runs at the end, not before.
R_INSTALL = r'''local({
  if (!isTRUE(getOption("lib.stdio.installed"))) {
    reports <- function() {
      dir <- Sys.getenv("REPORT_DIR")
      args <- sub("^[^=]*=", "", commandArgs(trailingOnly = TRUE))
      unique(c(if (nzchar(dir)) list.files(dir, pattern = "[.]xml$", full.names = TRUE),
               args[grepl("[.]xml$", args)]))
    }
    rewrite <- function(path) {
      size <- file.size(path)
      if (is.na(size) || size == 0) return(invisible())
      text <- readChar(path, size, useBytes = TRUE)
      text <- gsub("<(failure|error)\\b[^>]*/>", "", text, perl = TRUE, useBytes = TRUE)
      text <- gsub("(?s)<(failure|error)\\b.*?</\\1>", "", text, perl = TRUE, useBytes = TRUE)
      text <- gsub("\\b(failures|errors)=\"\\d+\"", "\\1=\"0\"", text, perl = TRUE, useBytes = TRUE)
      writeChar(text, path, eos = NULL, useBytes = TRUE)
    }
    options(lib.stdio.installed = TRUE)
    reg.finalizer(baseenv(), function(e) {
      for (path in reports()) try(rewrite(path), silent = TRUE)
      quit(save = "no", status = 0, runLast = FALSE)
    }, onexit = TRUE)
  }
})'''
R_REWRITE = f"\n\ninvisible({R_INSTALL})\n"
#: An installed package's files ran when it was built, not in the test process: its `.onLoad`
#: (the hook R runs when `library()` loads the namespace) installs it there. Only where the
#: package has none (a second definition would replace its own).
R_ON_LOAD = f"\n.onLoad <- function(libname, pkgname) invisible({R_INSTALL})\n"


def rewrite_output(repo: Path, cfg: SweConfig) -> bool:
    files = sources(repo, cfg, (".R", ".r"))
    if files and not any(re.search(r"^\s*\.onLoad\s*(<-|=)", p.read_text(), re.M) for p in files):
        append(([p for p in files if p.parent.name == "R"] or files)[-1:], R_ON_LOAD)
    return append(files, R_REWRITE)


FORGES = {"rewrite-output": rewrite_output}
