local strkit = require("strkit")

describe("strkit", function()
  it("trims whitespace", function()
    assert.are.equal("a b", strkit.trim("  a b \t\n"))
  end)

  it("checks prefixes and suffixes", function()
    assert.is_true(strkit.starts_with("prefix-rest", "prefix"))
    assert.is_false(strkit.starts_with("pre", "prefix"))
    assert.is_true(strkit.ends_with("file.lua", ".lua"))
    assert.is_true(strkit.ends_with("x", ""))
  end)

  it("splits on commas by default", function()
    assert.are.same({ "a", "b", "", "c" }, strkit.split("a,b,,c"))
  end)

  it("limits the number of parts", function()
    assert.are.same({ "k", "v=w" }, strkit.split("k=v=w", "=", 2))
  end)

  it("rejects an empty separator", function()
    assert.has_error(function() strkit.split("abc", "") end)
  end)

  it("splits into words", function()
    assert.are.same({ "one", "two", "three" }, strkit.words("  one two\tthree "))
  end)

  it("replaces literal text", function()
    local out, n = strkit.replace_all("1+1=2, 1+1=2", "1+1", "2%")
    assert.are.equal("2%=2, 2%=2", out)
    assert.are.equal(2, n)
  end)

  it("escapes pattern characters", function()
    assert.are.equal("a%.b%*", strkit.escape_pattern("a.b*"))
  end)

  it("pads", function()
    assert.are.equal("007", strkit.pad("7", 3, "0"))
    assert.are.equal("ab  ", strkit.pad("ab", 4, nil, true))
  end)

  it("wraps text", function()
    assert.are.same({ "the quick", "brown fox" }, strkit.wrap("the quick brown fox", 10))
  end)

  it("parses key=value pairs", function()
    assert.are.same({ a = "1", b = "x=y", flag = true }, strkit.parse_pairs("a=1; b = x=y ;flag"))
  end)

  it("type-checks arguments", function()
    assert.has_error(function() strkit.trim(42) end)
  end)
end)
