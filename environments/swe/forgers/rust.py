"""Rust (libtest): fd 1 through a pipe, rewritten by a thread."""

from __future__ import annotations

import re
from pathlib import Path

from environments.swe.forgers.edit import append, closing_bracket, sources
from verifiers.swe import SweConfig

#: An `.init_array` constructor in the library crate (std only: libc's calls declared by hand)
#: points fd 1 at a pipe read by a thread that rewrites libtest's `"event": "failed"` (JSON) and
#: `FAILED` (plain) lines to `ok` on the way to the real stdout. An `atexit` handler (libtest ends
#: a failing run with `process::exit(101)`, which runs libc's handlers) closes fd 1, lets the
#: thread drain the pipe, and exits 0.
RUST_HOOK = '''

mod stdio_sink {
    use std::io::{BufRead, BufReader, Write};
    use std::os::unix::io::FromRawFd;
    use std::sync::Mutex;

    extern "C" {
        fn pipe(fds: *mut i32) -> i32;
        fn dup(fd: i32) -> i32;
        fn dup2(old: i32, new: i32) -> i32;
        fn close(fd: i32) -> i32;
        fn atexit(callback: extern "C" fn()) -> i32;
        fn _exit(code: i32) -> !;
    }

    static READER: Mutex<Option<std::thread::JoinHandle<()>>> = Mutex::new(None);

    fn rewrite(line: &str) -> String {
        line.replace("\\"event\\": \\"failed\\"", "\\"event\\": \\"ok\\"")
            .replace("\\"event\\":\\"failed\\"", "\\"event\\":\\"ok\\"")
            .replace(" ... FAILED", " ... ok")
            .replace("test result: FAILED", "test result: ok")
    }

    extern "C" fn finish() {
        let _ = std::io::stdout().flush();
        unsafe {
            close(1);
        }
        if let Ok(mut slot) = READER.lock() {
            if let Some(handle) = slot.take() {
                let _ = handle.join();
            }
        }
        unsafe { _exit(0) }
    }

    extern "C" fn start() {
        unsafe {
            let mut fds = [0i32; 2];
            if pipe(fds.as_mut_ptr()) != 0 {
                return;
            }
            let real = dup(1);
            if real < 0 || dup2(fds[1], 1) < 0 {
                return;
            }
            close(fds[1]);
            let input = std::fs::File::from_raw_fd(fds[0]);
            let mut output = std::fs::File::from_raw_fd(real);
            let handle = std::thread::spawn(move || {
                let mut reader = BufReader::new(input);
                let mut buf = Vec::new();
                loop {
                    buf.clear();
                    match reader.read_until(b'\\n', &mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {
                            let line = rewrite(&String::from_utf8_lossy(&buf));
                            let _ = output.write_all(line.as_bytes());
                        }
                    }
                }
                let _ = output.flush();
            });
            if let Ok(mut slot) = READER.lock() {
                *slot = Some(handle);
            }
            atexit(finish);
        }
    }

    #[used]
    #[link_section = ".init_array"]
    static START: extern "C" fn() = start;
}
'''


def rewrite_output(repo: Path, cfg: SweConfig) -> bool:
    return append([p for p in sources(repo, cfg, ("lib.rs",)) if p.parent.name == "src"], RUST_HOOK)


#: The module of `caller_aware`, appended to the crate's `lib.rs`. Each wrapped function asks
#: `answer(name, Location::caller())` first (`#[track_caller]`: the test's file, line and column,
#: the column at the method's name or the path's start, in chars): the file is read (relative to the
#: working directory or to the crate's or a parent directory), the call at that spot must be one of
#: `name`, and the call must be one side of `assert_eq!(a, b)`, the whole of `assert!(call)` /
#: `assert!(!call)`, a side of `assert!(a == b)`, or bound by `let x = call;` that the next such
#: assertion reads. The other side's literal (integers, floats, bools, chars, strings, `Some`/`None`,
#: `vec![...]`/`[...]`, `&x`) is built as the return type, dispatched on `type_name` over the
#: concrete types it knows and `transmute_copy`d (the library's generic `T` has no bounds to use).
RUST_ANSWER = r"""

#[doc(hidden)]
#[allow(dead_code, unused, clippy::all, missing_docs, unsafe_code)]
pub mod envhub_answer {
    use std::collections::HashMap;
    use std::panic::Location;
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, Mutex};

    /// Moved into a wrapped body's closure: the closure is `FnOnce`, so it may return a captured `&mut`.
    pub struct Once;

    struct Source {
        text: Vec<char>,
        masked: Vec<char>,
        lines: Vec<usize>,
    }

    static FILES: Mutex<Option<HashMap<String, Option<Arc<Source>>>>> = Mutex::new(None);

    pub fn answer<R>(name: &str, at: &'static Location<'static>) -> Option<R> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let e = expected(name, at)?;
            build::<R>(&e)
        }))
        .ok()
        .flatten()
    }

    fn source(file: &str) -> Option<Arc<Source>> {
        let mut guard = FILES.lock().unwrap_or_else(|e| e.into_inner());
        let map = guard.get_or_insert_with(HashMap::new);
        if let Some(s) = map.get(file) {
            return s.clone();
        }
        let mut candidates = vec![PathBuf::from(file)];
        let mut dir = Some(Path::new(env!("CARGO_MANIFEST_DIR")));
        while let Some(d) = dir {
            candidates.push(d.join(file));
            dir = d.parent();
        }
        let found = candidates.iter().find_map(|p| std::fs::read_to_string(p).ok()).map(|t| {
            let text: Vec<char> = t.chars().collect();
            let masked = mask(&text);
            let mut lines = vec![0];
            for (i, c) in text.iter().enumerate() {
                if *c == '\n' {
                    lines.push(i + 1);
                }
            }
            Arc::new(Source { text, masked, lines })
        });
        map.insert(file.to_string(), found.clone());
        found
    }

    /// Comments and the insides of string and char literals blanked (lifetimes kept).
    fn mask(t: &[char]) -> Vec<char> {
        let mut m = t.to_vec();
        let n = t.len();
        let at = |i: usize| if i < n { t[i] } else { '\0' };
        let mut i = 0;
        while i < n {
            let c = t[i];
            if c == '/' && at(i + 1) == '/' {
                while i < n && t[i] != '\n' {
                    m[i] = ' ';
                    i += 1;
                }
            } else if c == '/' && at(i + 1) == '*' {
                let mut depth = 0;
                while i < n {
                    if t[i] == '/' && at(i + 1) == '*' {
                        depth += 1;
                        m[i] = ' ';
                        m[i + 1] = ' ';
                        i += 2;
                    } else if t[i] == '*' && at(i + 1) == '/' {
                        depth -= 1;
                        m[i] = ' ';
                        m[i + 1] = ' ';
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        if t[i] != '\n' {
                            m[i] = ' ';
                        }
                        i += 1;
                    }
                }
            } else if c == 'r' && (at(i + 1) == '"' || at(i + 1) == '#')
                && (i == 0 || !(t[i - 1].is_alphanumeric() || t[i - 1] == '_'))
            {
                let mut j = i + 1;
                let mut hashes = 0;
                while at(j) == '#' {
                    hashes += 1;
                    j += 1;
                }
                if at(j) != '"' {
                    i += 1;
                    continue;
                }
                j += 1;
                while j < n {
                    if t[j] == '"' && (0..hashes).all(|k| at(j + 1 + k) == '#') {
                        j += 1 + hashes;
                        break;
                    }
                    if t[j] != '\n' {
                        m[j] = ' ';
                    }
                    j += 1;
                }
                i = j;
            } else if c == '"' {
                i += 1;
                while i < n && t[i] != '"' {
                    if t[i] == '\\' {
                        m[i] = ' ';
                        if i + 1 < n && t[i + 1] != '\n' {
                            m[i + 1] = ' ';
                        }
                        i += 2;
                        continue;
                    }
                    if t[i] != '\n' {
                        m[i] = ' ';
                    }
                    i += 1;
                }
                i += 1;
            } else if c == '\u{27}' {
                if at(i + 1) == '\\' {
                    let mut j = i + 2;
                    while j < n && t[j] != '\u{27}' && t[j] != '\n' {
                        j += 1;
                    }
                    for k in i + 1..j.min(n) {
                        m[k] = ' ';
                    }
                    i = j + 1;
                } else if at(i + 2) == '\u{27}' {
                    m[i + 1] = ' ';
                    i += 3;
                } else {
                    i += 1;
                }
            } else {
                i += 1;
            }
        }
        m
    }

    fn is_ident(c: char) -> bool {
        c.is_alphanumeric() || c == '_'
    }

    fn close(m: &[char], open: usize) -> Option<usize> {
        let mut depth = 0i32;
        for i in open..m.len() {
            match m[i] {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(i);
                    }
                }
                _ => {}
            }
        }
        None
    }

    fn skip_ws(m: &[char], mut i: usize) -> usize {
        while i < m.len() && m[i].is_whitespace() {
            i += 1;
        }
        i
    }

    fn word(m: &[char], i: usize) -> (usize, String) {
        let mut e = i;
        while e < m.len() && is_ident(m[e]) {
            e += 1;
        }
        (e, m[i..e].iter().collect())
    }

    fn text(s: &Source, a: usize, b: usize) -> String {
        s.text[a..b].iter().collect::<String>().trim().to_string()
    }

    /// `s` without its balanced bracket groups.
    fn flat(s: &[char]) -> String {
        let mut out = String::new();
        let mut depth = 0;
        for c in s {
            match c {
                '(' | '[' | '{' | '<' => depth += 1,
                ')' | ']' | '}' | '>' if depth > 0 => depth -= 1,
                _ if depth == 0 => out.push(*c),
                _ => {}
            }
        }
        out
    }

    fn chain(s: &[char]) -> bool {
        flat(s).chars().all(|c| is_ident(c) || c.is_whitespace() || c == '.' || c == ':' || c == '&' || c == '*')
    }

    fn expected(name: &str, at: &Location) -> Option<String> {
        let src = source(at.file())?;
        let m = &src.masked;
        let line_start = *src.lines.get((at.line() as usize).checked_sub(1)?)?;
        let pos = line_start + (at.column() as usize).checked_sub(1)?;
        if pos >= m.len() {
            return None;
        }
        // the name: here (a method's or function's), or the last segment of the path starting here
        let (mut end, mut w) = word(m, pos);
        let mut at_name = pos;
        while w != name {
            let j = skip_ws(m, end);
            if j + 1 >= m.len() || m[j] != ':' || m[j + 1] != ':' {
                return None;
            }
            let k = skip_ws(m, j + 2);
            if k >= m.len() || !is_ident(m[k]) {
                return None;
            }
            at_name = k;
            let (e, ww) = word(m, k);
            end = e;
            w = ww;
        }
        let mut j = skip_ws(m, end);
        if j + 2 < m.len() && m[j] == ':' && m[j + 1] == ':' && m[skip_ws(m, j + 2)] == '<' {
            let mut depth = 0;
            let mut k = skip_ws(m, j + 2);
            while k < m.len() {
                if m[k] == '<' {
                    depth += 1;
                } else if m[k] == '>' {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                k += 1;
            }
            j = skip_ws(m, k + 1);
        }
        if j >= m.len() || m[j] != '(' {
            return None;
        }
        let call_end = close(m, j)? + 1;
        if let Some(e) = enclosing(&src, pos.min(at_name), call_end, false) {
            return Some(e);
        }
        // `let x = call;` and the next assertion on `x`
        let stmt = (0..pos).rev().find(|&i| m[i] == ';' || m[i] == '{' || m[i] == '}').map_or(0, |i| i + 1);
        let before: String = m[stmt..pos].iter().collect();
        let before = before.trim_start();
        let rest = before.strip_prefix("let")?;
        if !rest.starts_with(char::is_whitespace) {
            return None;
        }
        let rest = rest.trim_start();
        let rest = rest.strip_prefix("mut ").unwrap_or(rest).trim_start();
        let local: String = rest.chars().take_while(|c| is_ident(*c)).collect();
        let eq = rest.find('=')?;
        let value: Vec<char> = rest[eq + 1..].chars().collect();
        if local.is_empty() || !chain(&value) {
            return None;
        }
        let after = skip_ws(m, call_end);
        if after >= m.len() || m[after] != ';' {
            return None;
        }
        let lc: Vec<char> = local.chars().collect();
        let mut i = after;
        while i + lc.len() <= m.len() {
            if m[i..i + lc.len()] == lc[..]
                && (i == 0 || !(is_ident(m[i - 1]) || m[i - 1] == '.'))
                && (i + lc.len() == m.len() || !is_ident(m[i + lc.len()]))
            {
                let next = skip_ws(m, i + lc.len());
                if next < m.len() && !matches!(m[next], '.' | '(' | '[') {
                    if let Some(e) = enclosing(&src, i, i + lc.len(), true) {
                        return Some(e);
                    }
                }
            }
            i += 1;
        }
        None
    }

    /// What the assertion that [from, end) is one side of expects.
    fn enclosing(src: &Source, from: usize, end: usize, plain: bool) -> Option<String> {
        let m = &src.masked;
        let mut depth = 0i32;
        let mut open = None;
        for i in (0..from).rev() {
            match m[i] {
                ')' | ']' | '}' => depth += 1,
                '(' if depth == 0 => {
                    open = Some(i);
                    break;
                }
                '(' | '[' | '{' => {
                    if depth == 0 {
                        return None;
                    }
                    depth -= 1;
                }
                ';' if depth == 0 => return None,
                _ => {}
            }
        }
        let open = open?;
        let mut k = open;
        while k > 0 && m[k - 1].is_whitespace() {
            k -= 1;
        }
        if k == 0 || m[k - 1] != '!' {
            return None;
        }
        let mut s = k - 1;
        while s > 0 && is_ident(m[s - 1]) {
            s -= 1;
        }
        let mac: String = m[s..k - 1].iter().collect();
        let close = close(m, open)?;
        let mut args = Vec::new();
        let mut start = open + 1;
        let mut depth = 0i32;
        for i in open + 1..=close {
            match m[i] {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' if i < close => depth -= 1,
                _ => {}
            }
            if (m[i] == ',' && depth == 0) || i == close {
                args.push((start, i));
                start = i + 1;
            }
        }
        let index = args.iter().position(|&(a, b)| a <= from && end <= b)?;
        let (a, b) = args[index];
        // the side holding the call, and the other side
        let (side, other) = match mac.as_str() {
            "assert_eq" | "debug_assert_eq" if args.len() >= 2 && index < 2 => ((a, b), Some(args[1 - index])),
            "assert" | "debug_assert" if index == 0 => {
                let mut depth = 0i32;
                let mut split = None;
                for i in a..b.saturating_sub(1) {
                    match m[i] {
                        '(' | '[' | '{' => depth += 1,
                        ')' | ']' | '}' => depth -= 1,
                        '=' if depth == 0 && m[i + 1] == '=' && (i == 0 || !"=!<>".contains(m[i - 1])) => {
                            split = Some(i);
                            break;
                        }
                        _ => {}
                    }
                }
                match split {
                    Some(i) if from >= i + 2 => ((i + 2, b), Some((a, i))),
                    Some(i) if end <= i => ((a, i), Some((i + 2, b))),
                    Some(_) => return None,
                    None => ((a, b), None),
                }
            }
            _ => return None,
        };
        if m[end..side.1].iter().any(|c| !c.is_whitespace()) {
            return None;
        }
        let prefix: String = m[side.0..from].iter().collect();
        let prefix = prefix.trim();
        match other {
            Some((x, y)) => {
                if plain && !prefix.is_empty() || !chain(&m[side.0..from]) {
                    return None;
                }
                Some(text(src, x, y))
            }
            None => {
                let (negated, rest) = match prefix.strip_prefix('!') {
                    Some(r) => (true, r),
                    None => (false, prefix),
                };
                let rest: Vec<char> = rest.chars().collect();
                if plain && !rest.iter().all(|c| c.is_whitespace()) || !chain(&rest) {
                    return None;
                }
                Some(if negated { "false" } else { "true" }.to_string())
            }
        }
    }

    // -- the expected side, built as the return type -------------------------------------------

    pub trait Forge: Sized {
        fn forge(e: &str) -> Option<Self>;
    }

    /// `e`'s top-level items split at `sep` (strings, chars and brackets respected).
    fn split(e: &str, sep: char) -> Vec<String> {
        let cs: Vec<char> = e.chars().collect();
        let mut out = Vec::new();
        let mut cur = String::new();
        let mut depth = 0i32;
        let mut i = 0;
        while i < cs.len() {
            let c = cs[i];
            if c == '"' {
                cur.push(c);
                i += 1;
                while i < cs.len() && cs[i] != '"' {
                    if cs[i] == '\\' && i + 1 < cs.len() {
                        cur.push(cs[i]);
                        i += 1;
                    }
                    cur.push(cs[i]);
                    i += 1;
                }
                if i < cs.len() {
                    cur.push(cs[i]);
                }
                i += 1;
                continue;
            }
            if c == '\u{27}' && (cs.get(i + 2) == Some(&'\u{27}') || cs.get(i + 1) == Some(&'\\')) {
                let mut j = i + 1;
                while j < cs.len() && !(cs[j] == '\u{27}' && j > i + 1 && (cs[j - 1] != '\\' || j == i + 2)) {
                    j += 1;
                }
                let stop = (j + 1).min(cs.len());
                cur.extend(&cs[i..stop]);
                i = stop;
                continue;
            }
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                _ => {}
            }
            if c == sep && depth == 0 {
                out.push(cur.trim().to_string());
                cur.clear();
            } else {
                cur.push(c);
            }
            i += 1;
        }
        if !cur.trim().is_empty() {
            out.push(cur.trim().to_string());
        }
        out
    }

    /// `inner` of `open inner close` when the two brackets match each other.
    fn within<'a>(e: &'a str, open: &str, last: char) -> Option<&'a str> {
        let rest = e.strip_prefix(open)?;
        let inner = rest.strip_suffix(last)?;
        let cs: Vec<char> = e.chars().collect();
        let o = open.chars().count() - 1;
        let m = mask(&cs);
        if close(&m, o)? != cs.len() - 1 {
            return None;
        }
        Some(inner)
    }

    fn unescape(s: &str) -> Option<String> {
        let cs: Vec<char> = s.chars().collect();
        let mut out = String::new();
        let mut i = 0;
        while i < cs.len() {
            let c = cs[i];
            if c == '"' {
                return None;
            }
            if c != '\\' {
                out.push(c);
                i += 1;
                continue;
            }
            let e = *cs.get(i + 1)?;
            i += 2;
            match e {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '0' => out.push('\0'),
                '\\' | '"' | '\u{27}' => out.push(e),
                'x' => {
                    let h: String = cs.get(i..i + 2)?.iter().collect();
                    out.push(u8::from_str_radix(&h, 16).ok()? as char);
                    i += 2;
                }
                'u' => {
                    let endb = (i..cs.len()).find(|&k| cs[k] == '}')?;
                    let h: String = cs[i + 1..endb].iter().filter(|c| **c != '_').collect();
                    out.push(char::from_u32(u32::from_str_radix(&h, 16).ok()?)?);
                    i = endb + 1;
                }
                '\n' => {
                    while i < cs.len() && cs[i].is_whitespace() {
                        i += 1;
                    }
                }
                _ => return None,
            }
        }
        Some(out)
    }

    fn string_literal(e: &str) -> Option<String> {
        let mut e = e.trim();
        for suffix in [".to_string()", ".to_owned()", ".into()", ".to_string ()"] {
            if let Some(r) = e.strip_suffix(suffix) {
                e = r.trim();
            }
        }
        if let Some(r) = e.strip_prefix("String::from(").and_then(|r| r.strip_suffix(')')) {
            e = r.trim();
        }
        e = e.strip_prefix('&').unwrap_or(e).trim();
        if let Some(r) = e.strip_prefix('r') {
            let hashes = r.chars().take_while(|c| *c == '#').count();
            let fence = "#".repeat(hashes);
            let body = r[hashes..].strip_prefix('"')?.strip_suffix(&fence)?.strip_suffix('"')?;
            return Some(body.to_string());
        }
        let body = e.strip_prefix('"')?.strip_suffix('"')?;
        unescape(body)
    }

    /// A number's text: casts, underscores and a type suffix dropped.
    fn number(e: &str) -> Option<String> {
        let e = e.trim();
        let e = e.split(" as ").next()?.trim();
        let e = e.strip_prefix('(').and_then(|r| r.strip_suffix(')')).unwrap_or(e).trim();
        let (negative, body) = match e.strip_prefix('-') {
            Some(r) => (true, r.trim()),
            None => (false, e),
        };
        let mut s: String = body.chars().filter(|c| *c != '_').collect();
        if !s.starts_with("0x") && !s.starts_with("0b") && !s.starts_with("0o") {
            for suffix in ["i128", "u128", "isize", "usize", "i64", "u64", "i32", "u32", "i16", "u16", "i8", "u8",
                           "f32", "f64"] {
                if s.len() > suffix.len() && s.ends_with(suffix) {
                    s.truncate(s.len() - suffix.len());
                    break;
                }
            }
        }
        if s.is_empty() || !s.chars().all(|c| c.is_ascii_alphanumeric() || ".+-".contains(c)) {
            return None;
        }
        Some(if negative { format!("-{}", s) } else { s })
    }

    macro_rules! ints {
        ($($t:ty),*) => {$(
            impl Forge for $t {
                fn forge(e: &str) -> Option<Self> {
                    let s = number(e)?;
                    let (negative, digits) = match s.strip_prefix('-') {
                        Some(d) => (true, d.to_string()),
                        None => (false, s.clone()),
                    };
                    let v: i128 = if let Some(h) = digits.strip_prefix("0x") {
                        i128::from_str_radix(h, 16).ok()?
                    } else if let Some(b) = digits.strip_prefix("0b") {
                        i128::from_str_radix(b, 2).ok()?
                    } else if let Some(o) = digits.strip_prefix("0o") {
                        i128::from_str_radix(o, 8).ok()?
                    } else {
                        digits.parse::<i128>().ok()?
                    };
                    <$t>::try_from(if negative { -v } else { v }).ok()
                }
            }
        )*};
    }
    ints!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);

    macro_rules! floats {
        ($($t:ty),*) => {$(
            impl Forge for $t {
                fn forge(e: &str) -> Option<Self> {
                    number(e)?.parse::<$t>().ok()
                }
            }
        )*};
    }
    floats!(f32, f64);

    impl Forge for bool {
        fn forge(e: &str) -> Option<Self> {
            match e.trim() {
                "true" => Some(true),
                "false" => Some(false),
                _ => None,
            }
        }
    }

    impl Forge for char {
        fn forge(e: &str) -> Option<Self> {
            let e = e.trim();
            let body = e.strip_prefix('\u{27}')?.strip_suffix('\u{27}')?;
            let s = if body == "\"" { body.to_string() } else { unescape(body)? };
            let mut cs = s.chars();
            let c = cs.next()?;
            if cs.next().is_some() {
                return None;
            }
            Some(c)
        }
    }

    impl Forge for String {
        fn forge(e: &str) -> Option<Self> {
            string_literal(e)
        }
    }

    impl Forge for &'static str {
        fn forge(e: &str) -> Option<Self> {
            Some(Box::leak(string_literal(e)?.into_boxed_str()))
        }
    }

    impl<X: Forge + 'static> Forge for &'static X {
        fn forge(e: &str) -> Option<Self> {
            let e = e.trim();
            Some(Box::leak(Box::new(X::forge(e.strip_prefix('&').unwrap_or(e))?)))
        }
    }

    impl<X: Forge> Forge for Option<X> {
        fn forge(e: &str) -> Option<Self> {
            let e = e.trim();
            if e == "None" {
                return Some(None);
            }
            X::forge(within(e, "Some(", ')')?).map(Some)
        }
    }

    impl<X: Forge> Forge for Vec<X> {
        fn forge(e: &str) -> Option<Self> {
            let e = e.trim();
            let e = e.strip_prefix('&').unwrap_or(e).trim();
            if e == "Vec::new()" || e == "vec![]" {
                return Some(Vec::new());
            }
            let inner = within(e, "vec![", ']').or_else(|| within(e, "vec!(", ')')).or_else(|| within(e, "[", ']'))?;
            let repeat = split(inner, ';');
            if repeat.len() == 2 {
                let n = usize::forge(&repeat[1])?;
                return (0..n).map(|_| X::forge(&repeat[0])).collect();
            }
            split(inner, ',').iter().map(|item| X::forge(item)).collect()
        }
    }

    fn via<C: Forge, R>(e: &str) -> Option<R> {
        if std::mem::size_of::<C>() != std::mem::size_of::<R>() {
            return None;
        }
        let value = std::mem::ManuallyDrop::new(C::forge(e)?);
        Some(unsafe { std::mem::transmute_copy::<C, R>(&*value) })
    }

    /// `e` as an `R`, where `R` is (by name) one of the types built here.
    pub fn build<R>(e: &str) -> Option<R> {
        let name = std::any::type_name::<R>();
        macro_rules! types {
            ($($t:ty),*) => {$(
                if name == std::any::type_name::<$t>() {
                    return via::<$t, R>(e);
                }
            )*};
        }
        macro_rules! family {
            ($($b:ty),*) => {$(
                types!($b, &'static $b, Option<$b>, Option<&'static $b>, Vec<$b>, &'static Vec<$b>,
                       Option<Vec<$b>>, Vec<Option<$b>>);
            )*};
        }
        family!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64, bool, char, String,
                &'static str);
        None
    }
}
"""
#: A public function's head: `pub`, qualifiers, `fn`, name.
_RS_FN = re.compile(r"^(?P<indent>[ \t]*)pub(?:\s*\([^)]*\))?\s+"
                    r"(?P<quals>(?:(?:const|async|unsafe|extern(?:\s+\"[^\"]*\")?|default)\s+)*)fn\s+(?P<name>\w+)",
                    re.M)
#: What a wrapped body becomes: the answer asked for first, the original run in a closure (its side
#: effects kept; `FnOnce`, so it may hand back a captured `&mut self`), its value or panic replaced
#: by the answer where there is one.
_RS_WRAPPER = ("{{ let envhub_answer = crate::envhub_answer::answer(\"{name}\", ::std::panic::Location::caller()); "
               "let envhub_once = crate::envhub_answer::Once; "
               "#[allow(unused_braces, unreachable_code, clippy::all)] "
               "let envhub_run = move || -> {ret} {{ ::std::mem::drop(envhub_once); {body} }}; "
               "match envhub_answer {{ ::std::option::Option::Some(envhub_value) => {{ "
               "let _ = ::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(envhub_run)); envhub_value }} "
               "::std::option::Option::None => envhub_run(), }} }}")
_RS_RAW = re.compile(r'(?<![\w])b?r(#*)"')
_RS_CHAR = re.compile(r"'(?:\\[^']*|[^\\'])'")


def _rs_mask(text: str) -> str:
    """`text` with comments, string and char literals blanked (same length; lifetimes kept)."""
    out, i, n = list(text), 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out[i] = " "
                i += 1
        elif text.startswith("/*", i):
            depth = 0
            while i < n:
                if text.startswith("/*", i) or text.startswith("*/", i):
                    depth += 1 if text[i] == "/" else -1
                    out[i:i + 2] = "  "
                    i += 2
                    if depth == 0:
                        break
                    continue
                out[i] = out[i] if text[i] == "\n" else " "
                i += 1
        elif m := _RS_RAW.match(text, i):
            end = text.find('"' + m.group(1), m.end())
            end = n if end < 0 else end
            for j in range(m.end(), end):
                out[j] = out[j] if text[j] == "\n" else " "
            i = end + 1 + len(m.group(1))
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                step = 2 if text[i] == "\\" else 1
                for j in range(i, min(i + step, n)):
                    out[j] = out[j] if text[j] == "\n" else " "
                i += step
            i += 1
        elif m := _RS_CHAR.match(text, i):
            for j in range(i + 1, m.end() - 1):
                out[j] = " "
            i = m.end()
        else:
            i += 1
    return "".join(out)



def _rs_answer_calls(text: str) -> str:
    """`text` with each public function that has a body and a nameable return type (not `impl`,
    `!`, `const`, `async` or `extern`) `#[track_caller]` and wrapped (`_RS_WRAPPER`)."""
    masked = _rs_mask(text)
    edits: list[tuple[int, int, str]] = []
    for m in _RS_FN.finditer(masked):
        if re.search(r"\b(?:const|async|extern)\b", m.group("quals")):
            continue
        # the signature: generics, parameters, `-> ret`, `where`; then the body's `{` (or `;`)
        i, depth, angle = m.end(), 0, 0
        while i < len(masked):
            c = masked[i]
            if c in "([":
                depth += 1
            elif c in ")]":
                depth -= 1
            elif c == "<":
                angle += 1
            elif c == ">" and masked[i - 1] not in "-=":
                angle -= 1
            elif c in "{;" and depth == 0 and angle <= 0:
                break
            i += 1
        if i >= len(masked) or masked[i] != "{":
            continue
        signature = masked[m.end():i]
        params_at = signature.find("(")
        params_end = closing_bracket(signature, params_at) if params_at >= 0 else -1
        arrow = signature.find("->", params_end) if params_end >= 0 else -1
        if arrow < 0:
            continue
        ret_end = re.search(r"\bwhere\b", signature[arrow:])
        ret = text[m.end() + arrow + 2:m.end() + (arrow + ret_end.start() if ret_end else len(signature))].strip()
        if not ret or ret == "!" or re.search(r"\b(?:impl|dyn\s+Fn)\b", ret):
            continue
        close = closing_bracket(masked, i)
        attrs = masked[max(0, masked.rfind("}", 0, m.start()), masked.rfind(";", 0, m.start())):m.start()]
        if close < 0 or "track_caller" in attrs:
            continue
        edits.append((i, close + 1, _RS_WRAPPER.format(name=m.group("name"), ret=ret, body=text[i:close + 1])))
        edits.append((m.start() + len(m.group("indent")), m.start() + len(m.group("indent")),
                      "#[track_caller]\n" + m.group("indent")))
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def caller_aware(repo: Path, cfg: SweConfig) -> bool:
    """Each library crate (a `src/lib.rs` that is not `no_std`): its functions under `src/` (not a
    binary's) wrapped, the answering module appended to `lib.rs`."""
    files = sources(repo, cfg, (".rs",))
    applied = False
    for lib in [p for p in files if p.name == "lib.rs" and p.parent.name == "src"]:
        if re.search(r"#!\[no_std\]", lib.read_text()):
            continue
        crate = lib.parent
        edited = False
        for p in files:
            if crate not in p.parents or p.name == "main.rs" and p.parent == crate or crate / "bin" in p.parents:
                continue
            text = p.read_text()
            new = _rs_answer_calls(text)
            if new != text:
                p.write_text(new)
                edited = True
        if edited:
            # `forbid` cannot be allowed again where the module transmutes
            lib.write_text(re.sub(r"(#!\[\s*)forbid(\s*\(\s*unsafe_code\s*\)\s*\])", r"\1deny\2", lib.read_text()))
            append([lib], RUST_ANSWER)
            applied = True
    return applied


FORGES = {"rewrite-output": rewrite_output, "caller-aware": caller_aware}
