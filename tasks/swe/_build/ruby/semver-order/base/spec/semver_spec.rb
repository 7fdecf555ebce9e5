# frozen_string_literal: true

require "semver"

RSpec.describe Semver::Version do
  def v(text) = Semver.parse(text)

  it "parses all parts" do
    x = v("1.2.3-beta.1+build.5")
    expect([x.major, x.minor, x.patch, x.prerelease, x.build]).to eq([1, 2, 3, %w[beta 1], "build.5"])
  end

  it "rejects malformed versions" do
    ["1.2", "01.2.3", "1.2.3-", "1.2.3-a..b", "x"].each do |bad|
      expect { v(bad) }.to raise_error(Semver::ParseError), bad
    end
  end

  it "orders by major, minor and patch numerically" do
    expect(Semver.sort(%w[1.10.0 1.2.0 1.9.9 0.99.0])).to eq(%w[0.99.0 1.2.0 1.9.9 1.10.0])
  end

  it "orders a prerelease before its release" do
    expect(v("1.0.0-rc.1")).to be < v("1.0.0")
  end

  it "orders alphanumeric prerelease identifiers lexically" do
    expect(v("1.0.0-alpha")).to be < v("1.0.0-beta")
    expect(v("1.0.0-alpha")).to be < v("1.0.0-alpha.1")
  end

  it "ignores build metadata when comparing" do
    expect(v("1.0.0+a")).to eq(v("1.0.0+b"))
  end

  it "bumps versions" do
    expect(v("1.2.3").bump(:minor).to_s).to eq("1.3.0")
    expect(v("1.2.3-rc.1").bump(:patch).to_s).to eq("1.2.3")
  end
end

RSpec.describe Semver::Requirement do
  def ok?(req, ver) = described_class.parse(req).satisfied_by?(Semver.parse(ver))

  it "handles comparison operators" do
    expect(ok?(">= 1.2, < 2", "1.9.0")).to be(true)
    expect(ok?(">= 1.2, < 2", "2.0.0")).to be(false)
    expect(ok?("!= 1.0.0", "1.0.0")).to be(false)
  end

  it "handles the pessimistic operator" do
    expect(ok?("~> 1.2", "1.9.0")).to be(true)
    expect(ok?("~> 1.2", "2.0.0")).to be(false)
    expect(ok?("~> 1.2.3", "1.2.9")).to be(true)
    expect(ok?("~> 1.2.3", "1.3.0")).to be(false)
  end

  it "handles the caret operator" do
    expect(ok?("^1.2.3", "1.99.0")).to be(true)
    expect(ok?("^0.2.3", "0.3.0")).to be(false)
    expect(ok?("^0.0.3", "0.0.4")).to be(false)
  end

  it "picks the highest satisfying version" do
    expect(Semver.max_satisfying(%w[1.0.0 1.4.2 1.10.1 2.0.0], "~> 1.0")).to eq("1.10.1")
  end
end
