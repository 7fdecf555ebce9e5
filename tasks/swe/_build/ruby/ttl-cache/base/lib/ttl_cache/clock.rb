# frozen_string_literal: true

class TTLCache
  # Monotonic seconds; tests pass a ManualClock instead.
  class Clock
    def now
      Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end
  end

  # A clock that only moves when told to.
  class ManualClock
    attr_reader :now

    def initialize(start = 0.0)
      @now = start
    end

    def advance(seconds)
      @now += seconds
    end
  end
end
