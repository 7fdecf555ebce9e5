# frozen_string_literal: true

require_relative "ttl_cache/clock"
require_relative "ttl_cache/stats"

# An in-memory cache with a maximum size (least recently used entries are evicted first)
# and an optional time-to-live per entry.
class TTLCache
  Entry = Struct.new(:value, :expires_at)

  attr_reader :max_size, :stats

  def initialize(max_size: 1000, ttl: nil, clock: Clock.new)
    raise ArgumentError, "max_size must be positive" unless max_size.positive?

    @max_size = max_size
    @ttl = ttl
    @clock = clock
    @entries = {}
    @stats = Stats.new
  end

  def size
    purge_expired
    @entries.size
  end

  def key?(key)
    !live_entry(key).nil?
  end

  # The value for `key`, or nil when it is absent or expired.
  def [](key)
    entry = live_entry(key)
    if entry
      @stats.hit!
      touch(key, entry)
      entry.value
    else
      @stats.miss!
      nil
    end
  end

  def write(key, value, ttl: @ttl)
    @entries.delete(key)
    @entries[key] = Entry.new(value, ttl && @clock.now + ttl)
    evict while @entries.size > @max_size
    value
  end
  alias []= write

  # The cached value for `key`; on a miss, the block's value is computed, stored and returned.
  def fetch(key, ttl: @ttl)
    value = self[key]
    return value if value

    write(key, yield(key), ttl: ttl)
  end

  def delete(key)
    entry = @entries.delete(key)
    entry&.value
  end

  def clear
    @entries.clear
    @stats.reset
  end

  def keys
    purge_expired
    @entries.keys
  end

  def to_h
    purge_expired
    @entries.transform_values(&:value)
  end

  private

  def live_entry(key)
    entry = @entries[key]
    return nil unless entry
    if entry.expires_at && entry.expires_at <= @clock.now
      @entries.delete(key)
      @stats.expired!
      return nil
    end
    entry
  end

  def touch(key, entry)
    @entries.delete(key)
    @entries[key] = entry
  end

  def evict
    key, = @entries.first
    @entries.delete(key)
    @stats.evicted!
  end

  def purge_expired
    now = @clock.now
    @entries.delete_if do |_, e|
      expired = e.expires_at && e.expires_at <= now
      @stats.expired! if expired
      expired
    end
  end
end
