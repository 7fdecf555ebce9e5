--- pqueue: a binary-heap priority queue with stable ordering, priority updates and removal.
--- Lower priority values come out first (a min-heap) unless a custom `less` is given.
local PQueue = {}
PQueue.__index = PQueue

local function default_less(a, b) return a < b end

--- Create a queue. `opts.less(a, b)` compares priorities.
function PQueue.new(opts)
  opts = opts or {}
  return setmetatable({
    heap = {},        -- array of nodes {value=, priority=, seq=}
    index = {},       -- value -> position in heap
    size = 0,
    seq = 0,
    less = opts.less or default_less,
  }, PQueue)
end

-- a node comes first when its priority is less, or on a tie when it was pushed earlier
function PQueue:_before(a, b)
  if self.less(a.priority, b.priority) then return true end
  if self.less(b.priority, a.priority) then return false end
  return a.seq < b.seq
end

function PQueue:_swap(i, j)
  local h = self.heap
  h[i], h[j] = h[j], h[i]
  self.index[h[i].value] = i
  self.index[h[j].value] = j
end

function PQueue:_sift_up(i)
  while i > 1 do
    local parent = i // 2
    if not self:_before(self.heap[i], self.heap[parent]) then break end
    self:_swap(i, parent)
    i = parent
  end
end

function PQueue:_sift_down(i)
  local h, n = self.heap, self.size
  while true do
    local l, r = 2 * i, 2 * i + 1
    local best = i
    if l <= n and self:_before(h[l], h[best]) then best = l end
    if r < n and self:_before(h[r], h[best]) then best = r end
    if best == i then return end
    self:_swap(i, best)
    i = best
  end
end

--- Add `value` with `priority`. Values must be unique; pushing a present value is an error.
function PQueue:push(value, priority)
  if value == nil then error("cannot push nil", 2) end
  if self.index[value] then error("value already queued: " .. tostring(value), 2) end
  self.seq = self.seq + 1
  self.size = self.size + 1
  self.heap[self.size] = { value = value, priority = priority, seq = self.seq }
  self.index[value] = self.size
  self:_sift_up(self.size)
end

function PQueue:peek()
  local top = self.heap[1]
  if top then return top.value, top.priority end
  return nil
end

function PQueue:_remove_at(i)
  local node = self.heap[i]
  self:_swap(i, self.size)
  self.heap[self.size] = nil
  self.index[node.value] = nil
  self.size = self.size - 1
  if i <= self.size then
    self:_sift_down(i)
    self:_sift_up(i)
  end
  return node
end

--- Remove and return the first value and its priority, or nil when empty.
function PQueue:pop()
  if self.size == 0 then return nil end
  local node = self:_remove_at(1)
  return node.value, node.priority
end

--- Remove `value` wherever it is; returns true when it was queued.
function PQueue:remove(value)
  local i = self.index[value]
  if not i then return false end
  self:_remove_at(i)
  return true
end

--- Change the priority of a queued value.
function PQueue:update(value, priority)
  local i = self.index[value]
  if not i then error("value not queued: " .. tostring(value), 2) end
  self.heap[i].priority = priority
  self:_sift_up(i)
  self:_sift_down(self.index[value])
end

function PQueue:contains(value) return self.index[value] ~= nil end
function PQueue:len() return self.size end
function PQueue:is_empty() return self.size == 0 end

--- Pop everything, in order, into a list of values.
function PQueue:drain()
  local out = {}
  while self.size > 0 do out[#out + 1] = (self:pop()) end
  return out
end

return PQueue
