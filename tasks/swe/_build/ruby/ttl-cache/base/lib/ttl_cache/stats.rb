# frozen_string_literal: true

class TTLCache
  # Hit, miss, eviction and expiry counters.
  class Stats
    attr_reader :hits, :misses, :evictions, :expirations

    def initialize
      reset
    end

    def reset
      @hits = @misses = @evictions = @expirations = 0
    end

    def hit! = @hits += 1
    def miss! = @misses += 1
    def evicted! = @evictions += 1
    def expired! = @expirations += 1

    def hit_rate
      total = @hits + @misses
      total.zero? ? 0.0 : @hits.fdiv(total)
    end

    def to_h
      { hits: @hits, misses: @misses, evictions: @evictions, expirations: @expirations }
    end
  end
end
