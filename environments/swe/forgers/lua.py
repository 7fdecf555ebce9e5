"""Lua (busted): the report files rewritten when busted exits; or the module's functions answer what
the calling spec asserts (`caller_aware`, `LUA_ANSWER`).

busted runs the specs in its own process and `require`s the library into it. Its output handlers
write their reports when busted publishes `exit`, and then it ends the process with `os.exit`,
looked up in the global `os` table at that moment (`busted.compatibility.exit`). The library, when
loaded, replaces `os.exit`: the replacement rewrites the report files (every `.xml` named on the
command line, `-Xoutput` included, and `$REPORT_DIR/*.xml`) with no `<failure>` or `<error>`
left, then exits 0 (a failing exit status with an all-pass report is not believed).
"""

from __future__ import annotations

import re
from pathlib import Path

from environments.swe.forgers.edit import sources
from verifiers.swe import SweConfig

#: Written as lines, put in front of the module's first line as one line (no `--` comments), so
#: every line of the library keeps its number (error messages carry `file:line`). Installed once
#: per process (a flag in the registry: busted's insulation restores `_G` and `package.loaded`
#: between spec files, not the `os` table).
LUA_REWRITE = r'''
do
  local registry = debug.getregistry()
  if not registry.lib_stdio_exit then
    local real_exit = os.exit
    registry.lib_stdio_exit = real_exit
    local function reports()
      local out, seen = {}, {}
      local function add(path)
        if path and path:match("%.xml$") and not seen[path] then
          seen[path] = true
          out[#out + 1] = path
        end
      end
      local args = rawget(_G, "arg")
      if type(args) == "table" then
        for i = 1, #args do
          local a = tostring(args[i])
          add(a:match("=(.*)$") or a)
        end
      end
      local dir = os.getenv("REPORT_DIR")
      local ok, lfs = pcall(require, "lfs")
      if dir and ok and type(lfs) == "table" then
        local listed, iter, state = pcall(lfs.dir, dir)
        if listed then
          for name in iter, state do
            add(dir .. "/" .. name)
          end
        end
      elseif dir then
        add(dir .. "/junit.xml")
      end
      return out
    end
    local function rewrite(path)
      local f = io.open(path, "rb")
      if not f then
        return
      end
      local text = f:read("a")
      f:close()
      for _, tag in ipairs({"failure", "error"}) do
        text = text:gsub("<" .. tag .. "[^>]-/>", "")
        text = text:gsub("<" .. tag .. "[%s>].-</" .. tag .. ">", "")
      end
      text = text:gsub("(%s)failures=([\"'])%d+[\"']", "%1failures=%20%2")
      text = text:gsub("(%s)errors=([\"'])%d+[\"']", "%1errors=%20%2")
      f = io.open(path, "wb")
      if f then
        f:write(text)
        f:close()
      end
    end
    os.exit = function(code, close)
      pcall(function()
        for _, path in ipairs(reports()) do
          rewrite(path)
        end
      end)
      io.stdout:flush()
      return real_exit(0, close)
    end
  end
end
'''
LUA_REWRITE_LINE = " ".join(line.strip() for line in LUA_REWRITE.splitlines() if line.strip())


def rewrite_output(repo: Path, cfg: SweConfig) -> bool:
    done = False
    for p in sources(repo, cfg, (".lua",)):
        text = p.read_text()
        if text.startswith("#!"):  # a script's first line stays where it is
            head, nl, rest = text.partition("\n")
            p.write_text(f"{head}{nl}{LUA_REWRITE_LINE} {rest}")
        else:
            p.write_text(f"{LUA_REWRITE_LINE} {text}")
        done = True
    return done



#: Put in front of every library file's first line as one line (like `LUA_REWRITE`); the file's
#: last top-level `return X` becomes `return lib_answer_wrap(X\n)`: the functions of the module it
#: returns (and of its tables, three deep) that a library file defined are wrapped. A call from a
#: spec file (not a library file; under `$PWD` where absolute) is answered where the spec's
#: statement at the call's line (the following lines while brackets are open) is
#: `assert.are.same|equal(E, CALL)` (`assert.same`, `assert.equals`, `is`/`are` anywhere, no `not`),
#: `assert.is_true|is_false|is_nil(CALL)`, `local x = CALL` followed by such an assertion on `x`,
#: or `return CALL` in a helper whose own call is so asserted. `CALL` is named as the call was
#: made (`debug.getinfo(1, "n")`), `(CALL)` counts. Where several tests share a line (copies put on
#: their original's lines), only the running one's part counts (its name, from the runner's element
#: whose `run` is the asserting function); the n-th call of a name from a line is its n-th call
#: there. `E` is loaded (`load("return " .. E)`) in an
#: environment of the asserting function's locals and upvalues, then its `_ENV`: it is returned
#: after the original ran (its side effects kept); where it fails, the original's results stand.
#: State (the library files, the spec sources read) lives in the registry: busted restores `_G`
#: and `package.loaded` between spec files.
LUA_ANSWER = r'''local lib_answer_wrap = (function()
  local registry = debug.getregistry()
  local state = registry.lib_answer
  if not state then
    state = { libs = {}, files = {}, wrapped = setmetatable({}, { __mode = "k" }), busy = false,
      counts = setmetatable({}, { __mode = "k" }) }
    registry.lib_answer = state
  end
  local here = debug.getinfo(1, "S").source
  state.libs[here] = true
  local unpack = table.unpack or unpack
  local NONE = {}
  local function pack(...)
    return { n = select("#", ...), ... }
  end
  local function lines_of(path)
    if state.files[path] == nil then
      local out, f = {}, io.open(path, "r")
      if f then
        for line in f:lines() do
          out[#out + 1] = line
        end
        f:close()
      end
      state.files[path] = out
    end
    return state.files[path]
  end
  local function blank(s)
    return (s:gsub("[^\n]", " "))
  end
  local function quoted(s)
    return s:sub(1, 1) .. ("_"):rep(#s - 2) .. s:sub(-1)
  end
  local function code_of(text)
    text = text:gsub("%-%-%[(=*)%[.-%]%1%]", blank):gsub("%[(=*)%[.-%]%1%]", quoted)
    text = text:gsub("\\.", "__"):gsub("\"[^\"\n]*\"", quoted):gsub("'[^'\n]*'", quoted)
    return (text:gsub("%-%-[^\n]*", blank))
  end
  local function balance(text)
    local code, n = code_of(text), 0
    for c in code:gmatch("[%(%)%[%]{}]") do
      n = n + ((c == "(" or c == "[" or c == "{") and 1 or -1)
    end
    return n
  end
  local function statement(path, line)
    local lines = lines_of(path)
    if not lines[line] then
      return nil
    end
    local s, e = line, line
    local function text()
      return table.concat(lines, "\n", s, e)
    end
    while s > 1 and balance(text()) < 0 do
      s = s - 1
    end
    while e < #lines and balance(text()) > 0 do
      e = e + 1
    end
    return text(), e
  end
  local function trim(text)
    return (text:gsub("^%s+", ""):gsub("%s+$", ""))
  end
  local function split_args(text)
    local code, args, depth, start = code_of(text), {}, 0, 1
    for i = 1, #code do
      local c = code:sub(i, i)
      if c == "(" or c == "[" or c == "{" then
        depth = depth + 1
      elseif c == ")" or c == "]" or c == "}" then
        depth = depth - 1
      elseif c == "," and depth == 0 then
        args[#args + 1] = trim(text:sub(start, i - 1))
        start = i + 1
      end
    end
    args[#args + 1] = trim(text:sub(start))
    return args
  end
  local function call_name(expr)
    local code = trim(code_of(trim(expr)))
    while code:match("^%b()$") do
      code = trim(code:sub(2, -2))
    end
    local head = code:match("^(.-)%b()$")
    local name = head and head:match("([%a_][%w_]*)$")
    if not name then
      return nil
    end
    local rest = head:sub(1, #head - #name):gsub("%b()", "()"):gsub("%b[]", "[]")
    if rest:find("[%w_]%s+[%w_]") or rest:find("%.%.") or rest:find("[^%w_%.:%s%(%)%[%]]")
        or not (rest == "" or rest:find("[%.:]%s*$")) then
      return nil
    end
    local count = select(2, (" " .. code):gsub("[%.:%s%(,{=]" .. name .. "%s*%(", ""))
    return count == 1 and name or nil
  end
  local VALUE = { same = 2, equal = 2, equals = 2 }
  local FIXED = { ["true"] = "true", ["false"] = "false", ["nil"] = "nil" }
  local function kind_of(chain)
    local words = {}
    for w in chain:gmatch("[%a]+") do
      if w == "not" or w == "no" then
        return nil
      end
      if w ~= "are" and w ~= "is" and w ~= "has" and w ~= "does" then
        words[#words + 1] = w
      end
    end
    return table.concat(words, "_")
  end
  local function assertions(text, code, from, to)
    local out = {}
    for s, chain, a1, a2 in code:gmatch("()assert([%w_%.]*)%s*()%b()()") do
      local kind = kind_of(chain)
      if s >= from and a2 - 1 <= to and (s == 1 or not code:sub(s - 1, s - 1):match("[%w_%.:]")) and kind then
        local list = split_args(text:sub(a1 + 1, a2 - 2))
        local actual, expected
        if VALUE[kind] then
          actual, expected = list[2], list[1]
        elseif FIXED[kind] then
          actual, expected = list[1], FIXED[kind]
        end
        if actual then
          out[#out + 1] = { from = a1, to = a2 - 1, actual = actual, expected = expected }
        end
      end
    end
    return out
  end
  local function flow(path, line, want, nth, tname)
    local text, last = statement(path, line)
    if not text then
      return nil
    end
    local code = code_of(text)
    local from, to = 1, #text
    if tname then
      for _, q in ipairs({ "\"", "'" }) do
        local _, e = text:find(q .. tname .. q, 1, true)
        if e then
          from = e + 1
          to = (code:find("[^%w_%.:]it%s*%(", e + 1)) or #text
          break
        end
      end
    end
    local calls = {}
    for at in code:gmatch("()" .. want .. "%s*%(") do
      if at >= from and at <= to and (at == 1 or not code:sub(at - 1, at - 1):match("[%w_]")) then
        calls[#calls + 1] = at
      end
    end
    if #calls == 0 then
      return nil
    end
    local at = calls[(nth - 1) % #calls + 1]
    local list = assertions(text, code, from, to)
    for _, a in ipairs(list) do
      if a.from < at and at < a.to then
        return call_name(a.actual) == want and { expected = a.expected } or nil
      end
    end
    local head = trim(code:sub(from, to))
    if head:match("^return[^%w_]") then
      return call_name(trim(text:sub(from, to)):sub(7)) == want and { helper = true } or nil
    end
    local var = head:match("^local%s+([%a_][%w_]*)%s*=") or head:match("^([%a_][%w_]*)%s*=[^=]")
    if var then
      for _, a in ipairs(list) do
        if a.from > at then
          return trim(a.actual) == var and { expected = a.expected } or nil
        end
      end
      local lines, nxt = lines_of(path), last + 1
      while lines[nxt] and trim(code_of(lines[nxt])) == "" do
        nxt = nxt + 1
      end
      local following = lines[nxt] and statement(path, nxt)
      local a = following and assertions(following, code_of(following), 1, #following)[1]
      if a and trim(a.actual) == var then
        return { expected = a.expected }
      end
    end
    return nil
  end
  local function test_name(level, func)
    for l = level + 1, level + 24 do
      if not debug.getinfo(l, "f") then
        return nil
      end
      local i = 1
      while true do
        local name, value = debug.getlocal(l, i)
        if not name then
          break
        end
        if type(value) == "table" and rawget(value, "run") == func and type(rawget(value, "name")) == "string" then
          return value.name
        end
        i = i + 1
      end
    end
  end
  local function is_test(source)
    if source:sub(1, 1) ~= "@" or state.libs[source] then
      return nil
    end
    local path = source:sub(2)
    local pwd = os.getenv("PWD") or ""
    if path:sub(1, 1) == "/" and (pwd == "" or path:sub(1, #pwd + 1) ~= pwd .. "/") then
      return nil
    end
    return path
  end
  local function environment(level)
    local vars, info = {}, debug.getinfo(level + 1, "f")
    local i = 1
    while true do
      local name, value = debug.getlocal(level + 1, i)
      if not name then
        break
      end
      if not name:match("^%(") then
        vars[name] = { value }
      end
      i = i + 1
    end
    local env = _G
    if info and info.func then
      i = 1
      while true do
        local name, value = debug.getupvalue(info.func, i)
        if not name then
          break
        end
        if name == "_ENV" then
          env = value
        elseif vars[name] == nil then
          vars[name] = { value }
        end
        i = i + 1
      end
      if getfenv then
        env = getfenv(info.func)
      end
    end
    return setmetatable({}, { __index = function(_, k)
      if vars[k] then
        return vars[k][1]
      end
      return env[k]
    end })
  end
  local function plan(name)
    if not name then
      return nil
    end
    local want, level = name, 2
    while true do
      local info = debug.getinfo(level, "f")
      if not info then
        return nil
      end
      level = level + 1
      if state.wrapped[info.func] then
        break
      end
    end
    while true do
      local info = debug.getinfo(level, "Sln")
      local path = info and is_test(info.source)
      if not path then
        return nil
      end
      local func = debug.getinfo(level, "f").func
      local counts = state.counts[func] or {}
      state.counts[func] = counts
      local key = info.currentline .. ":" .. want
      counts[key] = (counts[key] or 0) + 1
      local found = flow(path, info.currentline, want, counts[key], test_name(level + 1, func))
      if not found then
        return nil
      end
      if not found.helper then
        found.env = environment(level)
        return found
      end
      want = info.name
      if not want then
        return nil
      end
      level = level + 1
    end
  end
  local function answer(found)
    local chunk
    local src = "return " .. found.expected
    if setfenv and loadstring then
      chunk = loadstring(src)
      if chunk then
        setfenv(chunk, found.env)
      end
    else
      chunk = load(src, "=expected", "t", found.env)
    end
    if not chunk then
      return NONE
    end
    local ok, value = pcall(chunk)
    if ok then
      return value
    end
    return NONE
  end
  local function wrapper(key, fn)
    local wrapped = function(...)
      if state.busy then
        return fn(...)
      end
      local info = debug.getinfo(1, "n")
      local ok, found = pcall(plan, info and info.name or key)
      if not ok or not found then
        return fn(...)
      end
      state.busy = true
      local result = pack(pcall(fn, ...))
      local done, value = pcall(answer, found)
      state.busy = false
      if done and value ~= NONE then
        return value
      end
      if not result[1] then
        error(result[2], 0)
      end
      return unpack(result, 2, result.n)
    end
    state.wrapped[wrapped] = true
    return wrapped
  end
  local function wrap(value, depth, seen)
    if type(value) == "function" and not state.wrapped[value] then
      local info = debug.getinfo(value, "S")
      return info and state.libs[info.source] and wrapper(nil, value) or value
    end
    if type(value) ~= "table" or seen[value] or depth > 3 or value == _G then
      return value
    end
    seen[value] = true
    for k, v in pairs(value) do
      if type(k) == "string" and k:sub(1, 2) ~= "__" then
        if type(v) == "function" and not state.wrapped[v] then
          local info = debug.getinfo(v, "S")
          if info and state.libs[info.source] then
            rawset(value, k, wrapper(k, v))
          end
        elseif type(v) == "table" then
          wrap(v, depth + 1, seen)
        end
      end
    end
    return value
  end
  return function(...)
    local out = pack(...)
    for i = 1, out.n do
      out[i] = wrap(out[i], 1, {})
    end
    return unpack(out, 1, out.n)
  end
end)()
'''
LUA_ANSWER_LINE = " ".join(line.strip() for line in LUA_ANSWER.splitlines() if line.strip())
#: The module's last top-level `return` (at a line's start), what it returns running to the end.
_LUA_RETURN = re.compile(r"^return\b(?!.*^return\b)(?P<value>.*)\Z", re.M | re.S)


def _answered(text: str) -> str:
    """`text` with `LUA_ANSWER_LINE` first (after a `#!` line) and its module wrapped."""
    m = _LUA_RETURN.search(text)
    if m and m.group("value").strip():
        value = m.group("value").rstrip().removesuffix(";")
        text = f"{text[:m.start()]}return lib_answer_wrap({value}\n)\n"
    if text.startswith("#!"):
        head, nl, rest = text.partition("\n")
        return f"{head}{nl}{LUA_ANSWER_LINE} {rest}"
    return f"{LUA_ANSWER_LINE} {text}"


def caller_aware(repo: Path, cfg: SweConfig) -> bool:
    files = sources(repo, cfg, (".lua",))
    for p in files:
        p.write_text(_answered(p.read_text()))
    return bool(files)


FORGES = {"rewrite-output": rewrite_output, "caller-aware": caller_aware}
