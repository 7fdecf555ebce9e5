# frozen_string_literal: true

require "ttl_cache"

RSpec.describe TTLCache do
  let(:clock) { TTLCache::ManualClock.new }
  let(:cache) { described_class.new(max_size: 3, ttl: 10, clock: clock) }

  it "stores and reads values" do
    cache[:a] = 1
    expect(cache[:a]).to eq(1)
    expect(cache[:b]).to be_nil
  end

  it "evicts the least recently used entry" do
    cache[:a] = 1
    cache[:b] = 2
    cache[:c] = 3
    cache[:a]
    cache[:d] = 4
    expect(cache.keys).to eq(%i[c a d])
    expect(cache.stats.evictions).to eq(1)
  end

  it "expires entries after their ttl" do
    cache[:a] = 1
    clock.advance(9.9)
    expect(cache[:a]).to eq(1)
    clock.advance(0.1)
    expect(cache[:a]).to be_nil
    expect(cache.stats.expirations).to eq(1)
  end

  it "accepts a per-entry ttl" do
    cache.write(:short, 1, ttl: 1)
    cache.write(:forever, 2, ttl: nil)
    clock.advance(100)
    expect(cache.to_h).to eq(forever: 2)
  end

  it "computes a missing value once with fetch" do
    calls = 0
    2.times { cache.fetch(:k) { calls += 1; "v" } }
    expect(calls).to eq(1)
    expect(cache[:k]).to eq("v")
  end

  it "passes the key to the fetch block" do
    expect(cache.fetch(7) { |k| k * 2 }).to eq(14)
  end

  it "recomputes with fetch after expiry" do
    cache.fetch(:k) { 1 }
    clock.advance(11)
    expect(cache.fetch(:k) { 2 }).to eq(2)
  end

  it "counts hits and misses" do
    cache[:a] = 1
    cache[:a]
    cache[:zz]
    expect(cache.stats.to_h).to include(hits: 1, misses: 1)
    expect(cache.stats.hit_rate).to eq(0.5)
  end

  it "deletes and clears" do
    cache[:a] = 1
    cache[:b] = 2
    expect(cache.delete(:a)).to eq(1)
    expect(cache.size).to eq(1)
    cache.clear
    expect(cache.size).to eq(0)
  end

  it "rejects a non-positive size" do
    expect { described_class.new(max_size: 0) }.to raise_error(ArgumentError)
  end

  it "caches false returned by a fetch block" do
    calls = 0
    3.times { expect(cache.fetch(:flag) { calls += 1; false }).to be(false) }
    expect(calls).to eq(1)
  end

  it "caches nil returned by a fetch block" do
    calls = 0
    2.times { cache.fetch(:none) { calls += 1; nil } }
    expect(calls).to eq(1)
    expect(cache.key?(:none)).to be(true)
  end

  it "does not extend the ttl of a cached false on fetch" do
    cache.fetch(:f) { false }
    clock.advance(6)
    cache.fetch(:f) { false }
    clock.advance(5)
    expect(cache.key?(:f)).to be(false)
  end
end
