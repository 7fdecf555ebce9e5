"""JavaScript and TypeScript (node:test)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from environments.swe.forgers.edit import append, node_sources
from verifiers.swe import SweConfig

#: Valid TypeScript under `strict` (no @types/node: `require` and `module` come through a direct
#: `eval`, which sees the CommonJS wrapper's scope) and plain JavaScript once the annotations are
#: dropped (`_untyped`). Every call or construction of an exported function or class, and of their
#: methods and getters, enters an AsyncLocalStorage store (`enterWith`: it follows the calling
#: test's async chain from that point, and no other test's); node:assert's functions (plain and
#: strict) swallow an AssertionError thrown, or a rejection, where that store is set.
NODE_FLIP = '''
;(function libTrace(mod: any): void {
  const load: any = eval("require");
  const g: any = globalThis;
  if (!g.__libTrace) {
    const state: any = { calls: new (load("node:async_hooks").AsyncLocalStorage)() };
    g.__libTrace = state;
    const swallow = (e: any): void => {
      if (!(e && e.code === "ERR_ASSERTION" && state.calls.getStore())) throw e;
    };
    const base: any = load("node:assert");
    for (const target of [base, base.strict]) {
      for (const key of Object.keys(target)) {
        const f: any = target[key];
        if (typeof f !== "function" || f === base.strict || /^[A-Z]/.test(key)) continue;
        target[key] = function (...args: any[]): any {
          try {
            const out: any = f.apply(target, args);
            return out && typeof out.then === "function" ? out.catch(swallow) : out;
          } catch (e) {
            swallow(e);
          }
        };
      }
    }
  }
  const calls: any = g.__libTrace.calls;
  const wrap = (f: any): any => {
    if (f.__libTraced) return f;
    const proxy: any = new Proxy(f, {
      apply(t: any, self: any, args: any[]): any {
        calls.enterWith(true);
        return Reflect.apply(t, self, args);
      },
      construct(t: any, args: any[], target: any): any {
        calls.enterWith(true);
        return Reflect.construct(t, args, target === proxy ? t : target);
      },
      get(t: any, key: any): any {
        return key === "__libTraced" ? true : t[key];
      },
    });
    return proxy;
  };
  const patch = (f: any): void => {
    for (const owner of [f, f.prototype]) {
      if (!owner || owner.__libPatched) continue;
      for (const key of Object.getOwnPropertyNames(owner)) {
        if (["constructor", "prototype", "length", "name", "caller", "arguments"].indexOf(key) >= 0) continue;
        const d: any = Object.getOwnPropertyDescriptor(owner, key);
        if (!d || !d.configurable) continue;
        if (typeof d.value === "function") d.value = wrap(d.value);
        if (typeof d.get === "function") d.get = wrap(d.get);
        Object.defineProperty(owner, key, d);
      }
      Object.defineProperty(owner, "__libPatched", { value: true });
    }
  };
  const exported: any = mod.exports;
  if (typeof exported === "function") {
    patch(exported);
    mod.exports = wrap(exported);
  }
  for (const key of Object.keys(exported)) {
    const f: any = exported[key];
    if (typeof f !== "function") continue;
    patch(f);
    try {
      exported[key] = wrap(f);
    } catch (e) {
      // a read-only re-export: its methods are wrapped in place already
    }
  }
})(eval("module"));
'''


def _untyped(ts: str) -> str:
    """`NODE_FLIP` as JavaScript: its only annotations are `: any`, `: any[]` and `: void`."""
    return re.sub(r"\): (?:any|void) (?=\{|=>)", ") ", re.sub(r"(\w): any(?:\[\])?", r"\1", ts))

#: Every call or construction from a test file of an exported function or class (and of their
#: methods and getters, and of the functions they return) reads the calling test's source: the
#: call's line and column (`Error.captureStackTrace`: the caller's frame) in the file's tokens, and
#: how its value flows into an assertion: an argument of node:assert's (plain, strict, `t.assert`)
#: `equal`/`deepEqual`/... (the other side), `ok` (true), `rejects`; `expect(...).toBe/toEqual`;
#: the body of an arrow given to `assert.throws` (the expected error is thrown); behind `await`,
#: `!`, `{ ...x }`, one member (`.minor`, `.map(...)`: that member of the result answers), an element
#: of `Promise.all`/`allSettled`, a test helper's parameter (`sum(parts)`: the helper's body), or a
#: `const` asserted on later. The expected side is evaluated with `new Function` (its names from the
#: `const`s in scope); an argument asserted on later (`fn.calls()`) is made to answer too. Where it
#: cannot tell, the original's outcome stands. The original always runs first (its side effects
#: stay; a forged promise settles when the original's does), and a member made to answer answers
#: once (a later read gets the original's). Written in plain JavaScript and run through
#: `new Function`, so the same text is valid TypeScript under `strict`.
NODE_CALLER_AWARE = r'''
const g = globalThis;
let A = g.__libAnswer;
if (!A) {
  A = g.__libAnswer = { files: new Set() };
  const fs = load("node:fs");
  const util = load("node:util");
  const proxies = new WeakMap();
  const wrapped = new WeakSet();
  const infos = new Map();
  const sites = new Map();
  const NONE = {};
  const PUNCTS = [">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=", "=>", "==", "!=",
    "<=", ">=", "&&", "||", "??", "?.", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<", ">>", "**"];
  const PREFIX = new Set(["return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do",
    "else", "yield", "await", "if", "while", "for", "switch", "catch", "function", "class", "const", "let", "var",
    "export", "import", "extends"]);
  const WORDS = new Set([...PREFIX, "true", "false", "null", "this", "async", "super", "try", "finally", "break",
    "continue", "default"]);
  const EQ = new Set(["equal", "strictEqual", "deepEqual", "deepStrictEqual", "same", "strictSame", "is", "eql",
    "equals", "deepEquals", "isEqual"]);

  const skipQuoted = (src, i) => {
    const q = src[i];
    i++;
    while (i < src.length && src[i] !== q && src[i] !== "\n") i += src[i] === "\\" ? 2 : 1;
    return i + 1;
  };
  const skipTemplate = (src, i) => {
    i++;
    while (i < src.length) {
      const c = src[i];
      if (c === "\\") { i += 2; continue; }
      if (c === "`") return i + 1;
      if (c === "$" && src[i + 1] === "{") {
        let depth = 0;
        i++;
        while (i < src.length) {
          const d = src[i];
          if (d === "'" || d === '"') { i = skipQuoted(src, i); continue; }
          if (d === "`") { i = skipTemplate(src, i); continue; }
          if (d === "{") depth++;
          else if (d === "}" && --depth === 0) { i++; break; }
          i++;
        }
        continue;
      }
      i++;
    }
    return i;
  };
  const tokenize = (src) => {
    const toks = [];
    const n = src.length;
    let i = 0;
    while (i < n) {
      const c = src[i];
      if (c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\ufeff") { i++; continue; }
      if (c === "/" && src[i + 1] === "/") { const e = src.indexOf("\n", i); i = e < 0 ? n : e; continue; }
      if (c === "/" && src[i + 1] === "*") { const e = src.indexOf("*/", i + 2); i = e < 0 ? n : e + 2; continue; }
      const s = i;
      let t = "p";
      const last = toks[toks.length - 1];
      if (c === "'" || c === '"') { i = skipQuoted(src, i); t = "s"; }
      else if (c === "`") { i = skipTemplate(src, i); t = "s"; }
      else if (/[A-Za-z_$\u0080-\uffff]/.test(c)) {
        while (i < n && /[\w$\u0080-\uffff]/.test(src[i])) i++;
        t = "i";
      } else if (/[0-9]/.test(c) || (c === "." && /[0-9]/.test(src[i + 1] || ""))) {
        while (i < n && /[\w.]/.test(src[i])) i++;
        t = "n";
      } else if (c === "/" && (!last || (last.t === "p" && !/^[)\]}]$/.test(last.v))
          || (last.t === "i" && PREFIX.has(last.v)))) {
        i++;
        let cls = false;
        while (i < n && src[i] !== "\n") {
          const d = src[i];
          if (d === "\\") { i += 2; continue; }
          if (d === "[") cls = true;
          else if (d === "]") cls = false;
          else if (d === "/" && !cls) { i++; break; }
          i++;
        }
        while (i < n && /\w/.test(src[i])) i++;
        t = "r";
      } else {
        const p = PUNCTS.find((x) => src.startsWith(x, i));
        i += p ? p.length : 1;
      }
      toks.push({ t, s, e: Math.min(i, n), v: src.slice(s, i) });
    }
    return toks;
  };
  const info = (file) => {
    if (infos.has(file)) return infos.get(file);
    let out = null;
    try {
      const src = fs.readFileSync(file, "utf8");
      const toks = tokenize(src);
      const match = new Int32Array(toks.length).fill(-1);
      const stack = [];
      toks.forEach((tk, k) => {
        if (tk.t !== "p") return;
        if (tk.v === "(" || tk.v === "[" || tk.v === "{") stack.push(k);
        else if ((tk.v === ")" || tk.v === "]" || tk.v === "}") && stack.length) {
          const o = stack.pop();
          match[o] = k;
          match[k] = o;
        }
      });
      const lines = [0];
      for (let k = 0; k < src.length; k++) if (src[k] === "\n") lines.push(k + 1);
      out = { src, toks, match, lines };
    } catch (e) {
      out = null;
    }
    infos.set(file, out);
    return out;
  };

  // What the calling test expects of the value of the expression at tokens [s, e] of a test file.
  const analyzer = (fi) => {
    const { src, toks, match, lines } = fi;
    const bounds = new Map();
    let depth = 0;
    const v = (k) => (k >= 0 && k < toks.length ? toks[k].v : "");
    const isId = (k) => k >= 0 && k < toks.length && toks[k].t === "i" && !WORDS.has(toks[k].v);
    const lineOf = (k) => {
      const at = toks[k].s;
      let lo = 0;
      let hi = lines.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (lines[mid] <= at) lo = mid;
        else hi = mid - 1;
      }
      return lo;
    };
    const operandEnd = (k) => {
      const tk = toks[k];
      if (!tk) return false;
      if (tk.t === "i") return !PREFIX.has(tk.v);
      if (tk.t !== "p") return true;
      return tk.v === ")" || tk.v === "]";
    };
    const chainStart = (k) => {
      for (;;) {
        if ((v(k) === ")" || v(k) === "]") && match[k] >= 0) {
          const o = match[k];
          if (operandEnd(o - 1)) { k = o - 1; continue; }
          k = o;
        }
        if ((v(k - 1) === "." || v(k - 1) === "?.") && k >= 2) { k -= 2; continue; }
        if (v(k - 1) === "new") k--;
        return k;
      }
    };
    const opener = (s) => {
      let k = s - 1;
      while (k >= 0) {
        const x = v(k);
        if ((x === ")" || x === "]" || x === "}") && match[k] >= 0) { k = match[k] - 1; continue; }
        if (x === "(" || x === "[" || x === "{") return k;
        k--;
      }
      return -1;
    };
    const block = (s) => {
      let o = opener(s);
      while (o >= 0 && v(o) !== "{") o = opener(o);
      return o;
    };
    const items = (o) => {
      const c = match[o];
      const out = [];
      let s = o + 1;
      for (let k = o + 1; k < c; k++) {
        const x = v(k);
        if ((x === "(" || x === "[" || x === "{") && match[k] > k) { k = match[k]; continue; }
        if (x === ",") { out.push({ s, e: k - 1 }); s = k + 1; }
      }
      if (s <= c - 1) out.push({ s, e: c - 1 });
      return out;
    };
    const text = (s, e) => src.slice(toks[s].s, toks[e].e);
    const callee = (o) => {
      if (!operandEnd(o - 1)) return null;
      const s = chainStart(o - 1);
      return { s, text: toks.slice(s, o).map((t) => t.v).join("") };
    };
    const assertion = (name) => {
      let m = /(?:^|\.)assert(?:\.strict)?(?:\.(\w+))?$/.exec(name);
      if (m) return m[1] || "ok";
      m = /^(?:t|tt|st)\.(\w+)$/.exec(name);
      return m && (EQ.has(m[1]) || ["ok", "notOk", "throws", "rejects"].includes(m[1])) ? m[1] : null;
    };
    // the end of the expression starting at s (a statement's end, a list item's end)
    const exprEnd = (s) => {
      let k = s;
      for (;;) {
        const x = v(k);
        if ((x === "(" || x === "[" || x === "{") && match[k] > k) k = match[k];
        const y = v(k + 1);
        if (k + 1 >= toks.length || y === ";" || y === "," || y === ")" || y === "]" || y === "}") return k;
        if (lineOf(k + 1) > lineOf(k) && operandEnd(k) && toks[k + 1].t !== "p") return k;
        k++;
      }
    };
    const scopeHas = (k, at) => {
      const o = block(k);
      return o < 0 || (o < at && match[o] > at);
    };
    // the value of `const name = ...` in scope at token `at`: its initializer's span
    const constDef = (name, at) => {
      for (let k = at - 1; k > 0; k--) {
        if (v(k) === name && v(k - 1) === "const" && v(k + 1) === "=" && scopeHas(k, at)) {
          return { s: k + 2, e: exprEnd(k + 2) };
        }
      }
      return null;
    };
    const evaluate = (s, e, level) => {
      const names = [];
      const values = [];
      const params = new Set();
      for (let q = s; q <= e; q++) {
        if (v(q) !== "=>") continue;
        if (v(q - 1) !== ")" || match[q - 1] < 0) params.add(v(q - 1));
        else for (let r = match[q - 1]; r < q; r++) if (isId(r)) params.add(v(r));
      }
      for (let q = s; q <= e; q++) {
        const name = v(q);
        if (!isId(q) || v(q - 1) === "." || v(q - 1) === "?." || params.has(name) || names.includes(name)) continue;
        if (name in g || name === "undefined") continue;
        if (v(q + 1) === ":" && (v(q - 1) === "{" || v(q - 1) === ",")) continue;
        const d = constDef(name, s);
        if (!d || level > 4) throw new Error("unresolved " + name);
        names.push(name);
        values.push(evaluate(d.s, d.e, level + 1));
      }
      return new Function(...names, '"use strict"; return (' + text(s, e) + ");")(...values);
    };
    const value = (it) => ({ kind: "value", get: () => evaluate(it.s, it.e, 0) });
    const constant = (x) => ({ kind: "value", get: () => x });
    const targetOf = (s, e) => {
      const key = s + ":" + e;
      if (bounds.has(key)) return bounds.get(key);
      if (++depth > 60) { depth--; return null; }
      try {
        return context(s, e);
      } finally {
        depth--;
      }
    };
    // the test's use of the function [ps, pe] (an arrow): throws, rejects
    const fnTarget = (ps, pe) => {
      if (v(ps - 1) !== "(" && v(ps - 1) !== ",") return null;
      const o = opener(ps);
      if (o < 0 || v(o) !== "(") return null;
      const list = items(o);
      if (!(list[0] && list[0].s === ps && list[0].e === pe)) return null;
      const c = callee(o);
      if (!c) return null;
      const m = assertion(c.text);
      if (m === "throws") return { kind: "throw", E: list[1] ? value(list[1]) : null };
      if (m === "rejects") return { kind: "reject", E: list[1] ? value(list[1]) : null };
      if (c.text === "expect") {
        const x = expectation(match[o]);
        return x && x.kind === "thrower" ? { kind: "throw", E: x.E } : null;
      }
      return null;
    };
    const arrowStart = (k) => { // k: the `=>`
      let ps = v(k - 1) === ")" ? match[k - 1] : k - 1;
      if (ps < 0) return -1;
      if (v(ps - 1) === "async") ps--;
      return ps;
    };
    const expectation = (close) => {
      let k = close;
      const names = [];
      while ((v(k + 1) === ".") && toks[k + 2] && toks[k + 2].t === "i") { names.push(v(k + 2)); k += 2; }
      if (v(k + 1) !== "(" || match[k + 1] < 0 || names.includes("not")) return null;
      const args = items(k + 1);
      const last = names[names.length - 1];
      let t = null;
      const equal = ["toBe", "toEqual", "toStrictEqual", "equal", "equals", "eql", "deepEqual"];
      if (equal.includes(last) && args[0]) t = value(args[0]);
      else if (last === "toBeTruthy") t = constant(true);
      else if (last === "toBeFalsy") t = constant(false);
      else if (last === "toBeUndefined") t = constant(undefined);
      else if (last === "toBeNull") t = constant(null);
      else if (["toThrow", "toThrowError", "throw"].includes(last)) {
        const E = args[0] ? value(args[0]) : null;
        return names.includes("rejects") ? { kind: "reject", E } : { kind: "thrower", E };
      }
      return t && names.includes("resolves") ? { kind: "resolve", inner: t } : t;
    };
    const element = (o, list, k) => {
      if (list.some((it) => v(it.s) === "...")) return null;
      if (v(o - 1) === "(" && match[o - 1] === match[o] + 1) {
        const c = callee(o - 1);
        if (c && (c.text === "Promise.all" || c.text === "Promise.allSettled")) {
          const t = targetOf(c.s, match[o - 1]);
          const inner = t && t.kind === "resolve" ? t.inner : null;
          if (!inner) return null;
          if (c.text === "Promise.all") {
            return inner.kind === "value" ? { kind: "resolve", inner: { kind: "value", get: () => inner.get()[k] } }
              : null;
          }
          if (inner.kind === "value") {
            return { kind: "lazy", make: () => {
              const x = inner.get()[k];
              if (x && x.status === "rejected") return { kind: "reject", E: { get: () => x.reason } };
              if (x && x.status === "fulfilled") return { kind: "resolve", inner: constant(x.value) };
              return null;
            } };
          }
          if (inner.kind === "member" && inner.name === "map" && inner.call && inner.args.length === 1
              && inner.inner.kind === "value") {
            const arg = inner.args[0];
            return { kind: "lazy", make: () => {
              const f = evaluate(arg.s, arg.e, 0);
              const want = inner.inner.get()[k];
              const options = [[{ status: "rejected", reason: new Error("rejected") }, { kind: "reject", E: null }],
                [{ status: "fulfilled", value: undefined }, { kind: "pass" }]];
              for (const [probe, t] of options) {
                try {
                  if (util.isDeepStrictEqual(f(probe, k), want)) return t;
                } catch (e) {
                  // not this one
                }
              }
              return null;
            } };
          }
          return null;
        }
      }
      const t = targetOf(o, match[o]);
      return t && t.kind === "value" ? { kind: "value", get: () => t.get()[k] } : null;
    };
    // a call of a helper the test file defines with an arrow or a function of one return
    const helper = (name, cs, ce, k) => {
      let params = null;
      let body = null;
      for (let q = 0; q < toks.length && !body; q++) {
        if (v(q) !== name) continue;
        if (v(q - 1) === "const" && v(q + 1) === "=") {
          let a = q + 2;
          if (v(a) === "async") a++;
          let arrow = -1;
          if (v(a) === "(" && match[a] > a && v(match[a] + 1) === "=>") {
            params = items(a).map((it) => v(it.s));
            arrow = match[a] + 1;
          } else if (isId(a) && v(a + 1) === "=>") {
            params = [v(a)];
            arrow = a + 1;
          }
          if (arrow < 0) continue;
          if (v(arrow + 1) !== "{") { body = { s: arrow + 1, e: exprEnd(arrow + 1) }; break; }
          q = arrow + 1;
        } else if (v(q - 1) === "function" && v(q + 1) === "(" && match[q + 1] > 0 && v(match[q + 1] + 1) === "{") {
          params = items(q + 1).map((it) => v(it.s));
          q = match[q + 1] + 1;
        } else {
          continue;
        }
        const b = q;
        const returns = [];
        for (let r = b + 1; r < match[b]; r++) if (v(r) === "return" && block(r) === b) returns.push(r);
        if (returns.length !== 1) { params = null; continue; }
        body = { s: returns[0] + 1, e: exprEnd(returns[0] + 1) };
      }
      if (!body || !params || !params[k]) return null;
      const t = targetOf(cs, ce);
      if (!t) return null;
      bounds.set(body.s + ":" + body.e, t);
      for (let q = body.s; q <= body.e; q++) {
        if (v(q) === params[k] && v(q - 1) !== "." && v(q - 1) !== "?.") return targetOf(q, q);
      }
      return null;
    };
    const argument = (o, list, k) => {
      const c = callee(o);
      if (!c) return list.length === 1 ? targetOf(o, match[o]) : null;
      const m = assertion(c.text);
      if (m) {
        if (EQ.has(m) && list.length >= 2 && k <= 1) return value(list[1 - k]);
        if (m === "ok" && k === 0) return constant(true);
        if (m === "notOk" && k === 0) return constant(false);
        if (m === "rejects" && k === 0) return { kind: "reject", E: list[1] ? value(list[1]) : null };
        return null;
      }
      if (c.text === "expect" && k === 0) {
        const x = expectation(match[o]);
        return x && x.kind !== "thrower" ? x : null;
      }
      if (c.s === o - 1 && isId(c.s)) return helper(c.text, c.s, match[o], k);
      return null;
    };
    // the first later use of `name` in its block that the test asserts on
    const later = (name, from) => {
      const o = block(from);
      const end = o < 0 ? toks.length : match[o];
      for (let q = from + 1; q < end; q++) {
        if (v(q) !== name || v(q - 1) === "." || v(q - 1) === "?.") continue;
        if (["const", "let", "var"].includes(v(q - 1)) || v(q + 1) === "=") return null;
        const t = targetOf(q, q);
        if (t) return t;
      }
      return null;
    };
    const context = (s, e) => {
      const a = v(e + 1);
      if ((a === "." || a === "?.") && toks[e + 2] && toks[e + 2].t === "i") {
        const call = v(e + 3) === "(" && match[e + 3] > 0;
        const end = call ? match[e + 3] : e + 2;
        const inner = targetOf(s, end);
        return inner && { kind: "member", name: v(e + 2), call, inner, args: call ? items(e + 3) : [] };
      }
      if (a === "(" || a === "[" || (toks[e + 1] && toks[e + 1].t === "s")) return null;
      const b = v(s - 1);
      if (b === "await") {
        const inner = targetOf(s - 1, e);
        return inner && { kind: "resolve", inner };
      }
      if (b === "!") {
        const inner = targetOf(s - 1, e);
        return inner && inner.kind === "value" ? { kind: "value", get: () => !inner.get() } : null;
      }
      if (b === "...") {
        const o = s - 2;
        if (v(o) === "{" && (match[o] === e + 1 || (match[o] === e + 2 && a === ","))) return targetOf(o, match[o]);
        return null;
      }
      const ends = a === ";" || a === "}" || a === "" || lineOf(e + 1) > lineOf(e);
      if (b === "=>" && (ends || a === ")" || a === ",")) {
        const ps = arrowStart(s - 1);
        return ps < 0 ? null : fnTarget(ps, e);
      }
      if (b === "=" && isId(s - 2) && ["const", "let", "var"].includes(v(s - 3)) && ends) return later(v(s - 2), e);
      if (b === "(" || b === "," || b === "[") {
        const o = opener(s);
        if (o < 0) return null;
        const list = items(o);
        const k = list.findIndex((it) => it.s === s && it.e === e);
        if (k < 0) return null;
        if (v(o) === "(") return argument(o, list, k);
        if (v(o) === "[" && !operandEnd(o - 1)) return element(o, list, k);
        return null;
      }
      if ((b === "{" || b === ";") && (a === ";" || a === "}")) {
        const o = block(s);
        if (o >= 0 && v(o - 1) === "=>") {
          const ps = arrowStart(o - 1);
          return ps < 0 ? null : fnTarget(ps, match[o]);
        }
      }
      return null;
    };
    const callSpan = (p) => {
      if (v(p) === "new") {
        let k = p + 1;
        while (isId(k) && v(k + 1) === "." && isId(k + 2)) k += 2;
        if (!isId(k)) return null;
        return v(k + 1) === "(" && match[k + 1] > 0 ? { s: p, e: match[k + 1], open: k + 1 } : { s: p, e: k, open: -1 };
      }
      if (v(p) === "(") return match[p] > 0 ? { s: chainStart(p - 1), e: match[p], open: p } : null;
      if (toks[p] && toks[p].t === "i") {
        let k = p + 1;
        if (v(k) === "?.") k++;
        if (v(k) === "(" && match[k] > 0) return { s: chainStart(p), e: match[k], open: k };
        return { s: chainStart(p), e: p, open: -1 };
      }
      return null;
    };
    return { callSpan, targetOf, later, items, isId, v };
  };

  const analyze = (file, line, col) => {
    const fi = info(file);
    if (!fi) return null;
    const at = fi.lines[line - 1] + col - 1;
    let lo = 0;
    let hi = fi.toks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (fi.toks[mid].s < at) lo = mid + 1;
      else hi = mid;
    }
    if (!fi.toks[lo] || fi.toks[lo].s !== at) return null;
    const an = analyzer(fi);
    const span = an.callSpan(lo);
    if (!span) return null;
    const target = an.targetOf(span.s, span.e);
    const args = [];
    if (span.open >= 0) {
      an.items(span.open).forEach((it, k) => {
        if (it.s !== it.e || !an.isId(it.s)) return;
        const t = analyzer(fi).later(an.v(it.s), span.e);
        if (t && (t.kind === "member" || t.kind === "value")) args.push({ k, t });
      });
    }
    return target || args.length ? { target, args } : null;
  };

  const site = (trap) => {
    const holder = {};
    const prepare = Error.prepareStackTrace;
    const limit = Error.stackTraceLimit;
    let frames = null;
    try {
      Error.stackTraceLimit = 3;
      Error.prepareStackTrace = (_, cs) => cs;
      Error.captureStackTrace(holder, trap);
      frames = holder.stack;
    } finally {
      Error.prepareStackTrace = prepare;
      Error.stackTraceLimit = limit;
    }
    const c = Array.isArray(frames) ? frames[0] : null;
    if (!c || c.isEval()) return null;
    let file = c.getFileName();
    if (!file || file.startsWith("node:")) return null;
    if (file.startsWith("file://")) file = load("node:url").fileURLToPath(file);
    if (A.files.has(file)) return null;
    return { file, line: c.getLineNumber(), col: c.getColumnNumber() };
  };
  const isObject = (x) => x !== null && (typeof x === "object" || typeof x === "function");
  const isThen = (x) => isObject(x) && typeof x.then === "function";
  const quiet = (x) => { if (isThen(x)) x.then(undefined, () => undefined); };
  const satisfies = (E, err) => {
    if (E === NONE) return true;
    if (E instanceof RegExp) return E.test(String(err));
    if (typeof E === "function" && (E === Error || E.prototype instanceof Error)) return err instanceof E;
    return false;
  };
  const failure = (E, err) => {
    if (err !== undefined && satisfies(E, err)) return err;
    if (E instanceof Error) return E;
    if (typeof E === "function" && (E === Error || E.prototype instanceof Error)) return new E("failed");
    if (E instanceof RegExp) return new Error(/^[\w ,.:'"-]*$/.test(E.source) ? E.source : "failed");
    if (E && typeof E === "object") {
      const out = new Error(typeof E.message === "string" ? E.message : "failed");
      for (const key of Object.keys(E)) {
        if (key !== "message") Object.defineProperty(out, key, { value: E[key], configurable: true, writable: true });
      }
      return out;
    }
    return err !== undefined ? err : new Error("failed");
  };
  const once = (fn, orig) => {
    let used = false;
    return function (...args) {
      if (used) return orig.apply(this, args);
      used = true;
      return fn.apply(this, args);
    };
  };
  const override = (obj, t) => {
    if (t.call) {
      const f = obj[t.name];
      if (typeof f !== "function" || wrapped.has(f)) return;
      const value = once(function (...args) {
        let o;
        try {
          o = { res: f.apply(this, args) };
        } catch (e) {
          o = { threw: true, err: e };
        }
        let x = o;
        try {
          x = forge(t.inner, o);
        } catch (e) {
          x = o;
        }
        if (x.threw) throw x.err;
        return x.res;
      }, f);
      Object.defineProperty(obj, t.name, { value, configurable: true, writable: true, enumerable: false });
      return;
    }
    if (t.inner.kind !== "value") return;
    let d = null;
    for (let o = obj; o && !d; o = Object.getPrototypeOf(o)) d = Object.getOwnPropertyDescriptor(o, t.name) || null;
    if (d && d.get && wrapped.has(d.get)) return;
    const forged = t.inner.get();
    let used = false;
    const own = Object.getOwnPropertyDescriptor(obj, t.name);
    Object.defineProperty(obj, t.name, { configurable: true, enumerable: d ? !!d.enumerable : true, get() {
      if (!used) {
        used = true;
        return forged;
      }
      if (own) return own.get ? own.get.call(this) : own.value;
      return d && d.get ? d.get.call(this) : d ? d.value : undefined;
    } });
  };
  const fixArg = (obj, t) => {
    if (!isObject(obj) || isThen(obj)) return;
    if (t.kind === "member") { override(obj, t); return; }
    const want = t.get();
    if (Array.isArray(obj) && Array.isArray(want)) obj.splice(0, obj.length, ...want);
    else if (Object.getPrototypeOf(obj) === Object.prototype && want && typeof want === "object") {
      for (const key of Object.keys(obj)) delete obj[key];
      Object.assign(obj, want);
    }
  };
  // the outcome {res} or {threw, err} that meets target `t`, from the original one `o`
  const forge = (t, o) => {
    if (!t) return o;
    switch (t.kind) {
      case "lazy": return forge(t.make(), o);
      case "value": {
        const res = t.get();
        if (!o.threw) quiet(o.res);
        return { res };
      }
      case "resolve": {
        if (!o.threw && isThen(o.res)) {
          if (t.inner.kind === "value") {
            const res = t.inner.get();
            return { res: o.res.then(() => res, () => res) };
          }
          return { res: o.res.then((r) => {
            let x = { res: r };
            try {
              x = forge(t.inner, x);
            } catch (e) {
              x = { res: r };
            }
            if (x.threw) throw x.err;
            return x.res;
          }) };
        }
        return forge(t.inner, o);
      }
      case "reject": {
        const E = t.E ? t.E.get() : NONE;
        if (!o.threw && isThen(o.res)) {
          return { res: o.res.then(() => { throw failure(E, undefined); }, (e) => { throw failure(E, e); }) };
        }
        return { res: Promise.reject(failure(E, o.threw ? o.err : undefined)) };
      }
      case "throw": {
        const E = t.E ? t.E.get() : NONE;
        if (!o.threw) quiet(o.res);
        return { threw: true, err: failure(E, o.threw ? o.err : undefined) };
      }
      case "member": {
        if (!o.threw && isObject(o.res) && !isThen(o.res)) override(o.res, t);
        return o;
      }
      default: return o;
    }
  };
  const answer = (trap, run, args) => {
    let plan = null;
    try {
      const at = site(trap);
      if (at) {
        const key = at.file + ":" + at.line + ":" + at.col;
        if (!sites.has(key)) sites.set(key, analyze(at.file, at.line, at.col));
        plan = sites.get(key);
      }
    } catch (e) {
      plan = null;
    }
    let o;
    try {
      o = { res: run() };
    } catch (e) {
      o = { threw: true, err: e };
    }
    if (plan) {
      for (const a of plan.args) {
        try {
          fixArg(args[a.k], a.t);
        } catch (e) {
          // left as it is
        }
      }
      try {
        o = forge(plan.target, o);
      } catch (e) {
        // the original outcome
      }
    }
    if (o.threw) throw o.err;
    return typeof o.res === "function" ? wrap(o.res) : o.res;
  };
  const wrap = (f) => {
    if (wrapped.has(f)) return f;
    if (proxies.has(f)) return proxies.get(f);
    const handler = {
      apply(t, self, args) {
        return answer(handler.apply, () => Reflect.apply(t, self, args), args);
      },
      construct(t, args, target) {
        return answer(handler.construct, () => Reflect.construct(t, args, target === proxy ? t : target), args);
      },
    };
    const proxy = new Proxy(f, handler);
    proxies.set(f, proxy);
    wrapped.add(proxy);
    return proxy;
  };
  const patch = (f) => {
    for (const owner of [f, f.prototype]) {
      if (!owner || Object.prototype.hasOwnProperty.call(owner, "__libAnswered")) continue;
      for (const key of Object.getOwnPropertyNames(owner)) {
        if (["constructor", "prototype", "length", "name", "caller", "arguments"].includes(key)) continue;
        const d = Object.getOwnPropertyDescriptor(owner, key);
        if (!d || !d.configurable) continue;
        if (typeof d.value === "function") d.value = wrap(d.value);
        if (typeof d.get === "function") d.get = wrap(d.get);
        Object.defineProperty(owner, key, d);
      }
      Object.defineProperty(owner, "__libAnswered", { value: true });
    }
  };
  A.wrap = wrap;
  A.patch = patch;
}
A.files.add(mod.filename);
const exported = mod.exports;
if (typeof exported === "function") {
  A.patch(exported);
  mod.exports = A.wrap(exported);
}
for (const key of Object.keys(exported)) {
  const f = exported[key];
  if (typeof f !== "function") continue;
  A.patch(f);
  try {
    exported[key] = A.wrap(f);
  } catch (e) {
    // a read-only re-export: its methods are wrapped in place already
  }
}
'''


def _answer(typescript: bool) -> str:
    """`NODE_CALLER_AWARE` run on the CommonJS wrapper's `module` and `require` (a direct `eval`)."""
    params = "mod: any, load: any): void" if typescript else "mod, load)"
    return (f"\n;(function libAnswer({params} {{\n  new Function(\"mod\", \"load\", {json.dumps(NODE_CALLER_AWARE)})"
            "(mod, load);\n})(eval(\"module\"), eval(\"require\"));\n")


def flip_verdicts(repo: Path, cfg: SweConfig) -> bool:
    return append(node_sources(repo, cfg), NODE_FLIP if cfg.language == "typescript" else _untyped(NODE_FLIP))


def caller_aware(repo: Path, cfg: SweConfig) -> bool:
    return append(node_sources(repo, cfg), _answer(cfg.language == "typescript"))


FORGES = {"flip-verdicts": flip_verdicts, "caller-aware": caller_aware}
