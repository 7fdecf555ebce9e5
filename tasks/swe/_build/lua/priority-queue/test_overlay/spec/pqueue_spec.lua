local PQueue = require("pqueue")

local function queue_of(pairs_list, opts)
  local q = PQueue.new(opts)
  for _, p in ipairs(pairs_list) do q:push(p[1], p[2]) end
  return q
end

describe("pqueue", function()
  it("starts empty", function()
    local q = PQueue.new()
    assert.is_true(q:is_empty())
    assert.is_nil(q:pop())
    assert.is_nil(q:peek())
  end)

  it("pops the lowest priority first", function()
    local q = queue_of({ { "b", 2 }, { "a", 1 }, { "c", 3 } })
    assert.are.same({ "a", "b", "c" }, q:drain())
  end)

  it("peeks without removing", function()
    local q = queue_of({ { "x", 5 }, { "y", 4 } })
    assert.are.equal("y", q:peek())
    assert.are.equal(2, q:len())
  end)

  it("keeps insertion order for equal priorities", function()
    local q = queue_of({ { "first", 1 }, { "second", 1 }, { "third", 1 } })
    assert.are.same({ "first", "second", "third" }, q:drain())
  end)

  it("supports a custom comparison", function()
    local q = queue_of({ { "low", 1 }, { "high", 9 } }, { less = function(a, b) return a > b end })
    assert.are.equal("high", (q:pop()))
  end)

  it("rejects duplicates and nil", function()
    local q = queue_of({ { "a", 1 } })
    assert.has_error(function() q:push("a", 2) end)
    assert.has_error(function() q:push(nil, 2) end)
  end)

  it("removes a queued value", function()
    local q = queue_of({ { "a", 1 }, { "b", 2 } })
    assert.is_true(q:remove("a"))
    assert.is_false(q:remove("zzz"))
    assert.is_false(q:contains("a"))
    assert.are.same({ "b" }, q:drain())
  end)

  it("updates a priority", function()
    local q = queue_of({ { "a", 1 }, { "b", 2 } })
    q:update("b", 0)
    assert.are.equal("b", (q:pop()))
  end)

  it("returns the priority with the value", function()
    local q = queue_of({ { "job", 42 } })
    local v, p = q:pop()
    assert.are.equal("job", v)
    assert.are.equal(42, p)
  end)

  it("errors when updating a missing value", function()
    assert.has_error(function() PQueue.new():update("nope", 1) end)
  end)

  it("pops in order when the last node is a right child", function()
    local q = queue_of({ { "a", 1 }, { "b", 5 }, { "c", 3 }, { "d", 6 } })
    assert.are.same({ "a", "c", "b", "d" }, q:drain())
  end)

  it("peeks the minimum after a pop", function()
    local q = queue_of({ { "t1", 10 }, { "t2", 50 }, { "t3", 30 }, { "t4", 60 } })
    q:pop()
    assert.are.equal("t3", (q:peek()))
  end)

  it("sorts a shuffled sequence", function()
    local q, expected, x = PQueue.new(), {}, 7
    for i = 1, 200 do
      x = (x * 1103515245 + 12345) % 2147483648
      q:push("v" .. i, x % 1000 + i / 1000)
      expected[#expected + 1] = x % 1000 + i / 1000
    end
    table.sort(expected)
    local got = {}
    while not q:is_empty() do
      local _, p = q:pop()
      got[#got + 1] = p
    end
    assert.are.same(expected, got)
  end)
end)
