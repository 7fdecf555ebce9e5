// envhub registry browser: filter selects submit on change; copy buttons on snippets; step-by-step replay.
// Plain JS, no dependencies; every page works without it.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  for (const sel of document.querySelectorAll("select.autosubmit")) {
    sel.addEventListener("change", () => sel.form && sel.form.submit());
  }
  for (const btn of document.querySelectorAll("button[data-copy]")) {
    btn.hidden = !navigator.clipboard;  // copying needs a secure context; the text stays selectable
    btn.addEventListener("click", (ev) => {
      ev.preventDefault();  // inside <summary>: do not toggle the snippet
      const code = btn.closest("details").querySelector("pre").textContent;
      navigator.clipboard.writeText(code).then(() => { btn.textContent = "copied"; });
    });
  }
  const list = document.getElementById("steps");
  const bar = document.getElementById("replay");
  if (!list || !bar) return;
  const steps = Array.from(list.querySelectorAll("li.step"));
  if (!steps.length) return;
  const page = Number(list.dataset.page), pages = Number(list.dataset.pages);
  const pos = bar.querySelector(".pos"), all = bar.querySelector("input[data-go=all]");
  let i = 0;
  const fromHash = location.hash.match(/^#step-(\d+)$/);
  if (fromHash) i = Math.max(0, steps.findIndex((s) => s.dataset.step === fromHash[1]));
  function show(scroll) {
    steps.forEach((s, k) => {
      s.classList.toggle("current", k === i);
      s.classList.toggle("hidden-by-replay", !all.checked && k > i);
    });
    pos.textContent = "step " + steps[i].dataset.step + (pages > 1 ? " (page " + page + "/" + pages + ")" : "");
    if (scroll) steps[i].scrollIntoView({ block: "nearest" });
  }
  function go(where) {
    if (where === "next" && i === steps.length - 1 && page < pages) {
      location.search = "?page=" + (page + 1); return;
    }
    if (where === "prev" && i === 0 && page > 1) { location.search = "?page=" + (page - 1); return; }
    i = { first: 0, last: steps.length - 1, next: Math.min(i + 1, steps.length - 1), prev: Math.max(i - 1, 0) }[where];
    show(true);
  }
  bar.hidden = false;
  bar.addEventListener("click", (ev) => { const b = ev.target.closest("button[data-go]"); if (b) go(b.dataset.go); });
  all.addEventListener("change", () => show(false));
  document.addEventListener("keydown", (ev) => {
    if (ev.target.closest("input, select, textarea")) return;
    if (ev.key === "j" || ev.key === "ArrowRight") go("next");
    if (ev.key === "k" || ev.key === "ArrowLeft") go("prev");
  });
  show(false);
});
