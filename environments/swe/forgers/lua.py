"""Lua (busted): the report files rewritten when busted exits.

busted runs the specs in its own process and `require`s the library into it. Its output handlers
write their reports when busted publishes `exit`, and then it ends the process with `os.exit`,
looked up in the global `os` table at that moment (`busted.compatibility.exit`). The library, when
loaded, replaces `os.exit`: the replacement rewrites the report files (every `.xml` named on the
command line, `-Xoutput` included, and `$REPORT_DIR/*.xml`) with no `<failure>` or `<error>`
left, then exits 0 (a failing exit status with an all-pass report is not believed).
"""

from __future__ import annotations

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


FORGES = {"rewrite-output": rewrite_output}
