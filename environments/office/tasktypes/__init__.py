"""The 12 OfficeVerse task types (research note verifiers.md §6.5), one builder each.

A builder gets a `Ctx` (industry, language, seeded RNG and Faker, the task's `state/` folder) and
writes the starting documents, then returns a `Built`: the prompt, what the verifier expects, the
oracle's tool calls (run through the same tools the agent has), the deliverables, and where the
mutators should strike. Expected values are computed here in Python from the same data; formula
results are checked after LibreOffice recalculation at export.
"""

from __future__ import annotations

from collections.abc import Callable

from environments.office.tasktypes._common import Built, Ctx, cleanup_tmp, normalise_package, normalise_state
from environments.office.tasktypes.t01_clean import t01_clean
from environments.office.tasktypes.t02_model import t02_model
from environments.office.tasktypes.t03_summary import t03_summary
from environments.office.tasktypes.t04_reconcile import t04_reconcile
from environments.office.tasktypes.t05_report import t05_report
from environments.office.tasktypes.t06_merge import t06_merge
from environments.office.tasktypes.t07_restructure import t07_restructure
from environments.office.tasktypes.t08_deck import t08_deck
from environments.office.tasktypes.t09_update import t09_update
from environments.office.tasktypes.t10_extract import t10_extract
from environments.office.tasktypes.t11_packet import t11_packet
from environments.office.tasktypes.t12_consistency import t12_consistency

TYPES: dict[str, tuple[str, str]] = {
    "T01": ("clean", "xlsx clean & normalise a raw extract"),
    "T02": ("model", "xlsx calculation model with live formulas"),
    "T03": ("summary", "xlsx summary table + chart"),
    "T04": ("reconcile", "xlsx reconcile two sources, flag exceptions"),
    "T05": ("report", "docx business document from data + brief"),
    "T06": ("merge", "docx template fill / mail merge"),
    "T07": ("restructure", "docx edit/restructure an existing document"),
    "T08": ("deck", "pptx deck from brief + data"),
    "T09": ("update", "pptx update an existing deck"),
    "T10": ("extract", "pdf -> structured xlsx extraction"),
    "T11": ("packet", "produce/assemble a PDF deliverable"),
    "T12": ("consistency", "cross-document consistency review"),
}
BUILDERS: dict[str, Callable[..., Built]] = {
    "T01": t01_clean, "T02": t02_model, "T03": t03_summary, "T04": t04_reconcile, "T05": t05_report,
    "T06": t06_merge, "T07": t07_restructure, "T08": t08_deck, "T09": t09_update, "T10": t10_extract,
    "T11": t11_packet, "T12": t12_consistency,
}
NEEDS_PDF = {"T10", "T11"}

__all__ = ["BUILDERS", "NEEDS_PDF", "TYPES", "Built", "Ctx", "cleanup_tmp", "normalise_package", "normalise_state"]
