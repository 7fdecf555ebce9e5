--- strkit: small string helpers missing from Lua's standard library.
local M = {}

M._VERSION = "0.3.0"

local function check_string(value, name)
  if type(value) ~= "string" then
    error(("bad argument '%s' (string expected, got %s)"):format(name, type(value)), 3)
  end
end

--- Escape every magic character of a Lua pattern.
function M.escape_pattern(s)
  check_string(s, "s")
  return (s:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?]", "%%%0"))
end

function M.trim(s)
  check_string(s, "s")
  return (s:gsub("^%s+", ""):gsub("%s+$", ""))
end

function M.starts_with(s, prefix)
  check_string(s, "s")
  check_string(prefix, "prefix")
  return s:sub(1, #prefix) == prefix
end

function M.ends_with(s, suffix)
  check_string(s, "s")
  check_string(suffix, "suffix")
  return suffix == "" or s:sub(-#suffix) == suffix
end

--- Split `s` on the literal separator `sep` (default ","). `max` limits the number of parts;
--- the last part then holds the rest of the string. Empty fields are kept.
function M.split(s, sep, max)
  check_string(s, "s")
  sep = sep or ","
  if sep == "" then error("empty separator", 2) end
  local parts, init = {}, 1
  while not max or #parts < max - 1 do
    local i, j = s:find(sep, init)
    if not i then break end
    parts[#parts + 1] = s:sub(init, i - 1)
    init = j + 1
  end
  parts[#parts + 1] = s:sub(init)
  return parts
end

--- Split on runs of whitespace, dropping empty fields.
function M.words(s)
  check_string(s, "s")
  local out = {}
  for w in s:gmatch("%S+") do out[#out + 1] = w end
  return out
end

--- Replace every occurrence of the literal `old` with the literal `new`.
function M.replace_all(s, old, new)
  check_string(s, "s")
  check_string(old, "old")
  check_string(new, "new")
  if old == "" then return s, 0 end
  return s:gsub(M.escape_pattern(old), (new:gsub("%%", "%%%%")))
end

function M.join(list, sep)
  return table.concat(list, sep or "")
end

--- Pad on the left (or right when `right` is true) to `width` with `char` (default space).
function M.pad(s, width, char, right)
  check_string(s, "s")
  char = char or " "
  local fill = string.rep(char, math.max(0, width - #s))
  return right and (s .. fill) or (fill .. s)
end

--- Wrap text at `width` columns on word boundaries; words longer than `width` stay whole.
function M.wrap(s, width)
  local lines, line = {}, ""
  for _, w in ipairs(M.words(s)) do
    if line == "" then
      line = w
    elseif #line + 1 + #w <= width then
      line = line .. " " .. w
    else
      lines[#lines + 1] = line
      line = w
    end
  end
  if line ~= "" then lines[#lines + 1] = line end
  return lines
end

--- Parse one CSV-ish line of `key=value` pairs separated by `sep` (default ";").
function M.parse_pairs(s, sep)
  local out = {}
  for _, field in ipairs(M.split(s, sep or ";")) do
    local kv = M.split(field, "=", 2)
    local key = M.trim(kv[1])
    if key ~= "" then out[key] = kv[2] and M.trim(kv[2]) or true end
  end
  return out
end

return M
