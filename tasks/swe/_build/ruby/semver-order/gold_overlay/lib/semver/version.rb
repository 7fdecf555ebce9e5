# frozen_string_literal: true

module Semver
  # One version: MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]. Build metadata never affects ordering.
  class Version
    include Comparable

    PATTERN = /\A(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?(?:\+([0-9A-Za-z.-]+))?\z/

    attr_reader :major, :minor, :patch, :prerelease, :build

    def self.parse(text)
      m = PATTERN.match(text.to_s.strip.delete_prefix("v"))
      raise ParseError, "invalid version: #{text.inspect}" unless m

      pre = m[4] ? m[4].split(".") : []
      raise ParseError, "empty prerelease identifier in #{text.inspect}" if pre.any?(&:empty?)

      new(m[1].to_i, m[2].to_i, m[3].to_i, pre, m[5])
    end

    def initialize(major, minor, patch, prerelease = [], build = nil)
      @major = major
      @minor = minor
      @patch = patch
      @prerelease = prerelease.freeze
      @build = build
      freeze
    end

    def prerelease? = !@prerelease.empty?

    def <=>(other)
      return nil unless other.is_a?(Version)

      cmp = [major, minor, patch] <=> [other.major, other.minor, other.patch]
      return cmp unless cmp.zero?

      compare_prerelease(other)
    end

    def eql?(other) = other.is_a?(Version) && (self <=> other).zero?
    def hash = [major, minor, patch, prerelease].hash

    def bump(part)
      case part
      when :major then Version.new(major + 1, 0, 0)
      when :minor then Version.new(major, minor + 1, 0)
      when :patch then prerelease? ? Version.new(major, minor, patch) : Version.new(major, minor, patch + 1)
      else raise ArgumentError, "unknown part #{part.inspect}"
      end
    end

    def to_s
      s = "#{major}.#{minor}.#{patch}"
      s += "-#{prerelease.join('.')}" if prerelease?
      s += "+#{build}" if build
      s
    end

    def inspect = "#<Semver::Version #{self}>"

    private

    # A release sorts after its prereleases; prereleases compare identifier by identifier,
    # and a shorter list of identifiers sorts first when all shared ones are equal.
    def compare_prerelease(other)
      return 0 if !prerelease? && !other.prerelease?
      return 1 unless prerelease?
      return -1 unless other.prerelease?

      prerelease.zip(other.prerelease).each do |a, b|
        return 1 if b.nil?

        cmp = compare_identifier(a, b)
        return cmp unless cmp.zero?
      end
      prerelease.length <=> other.prerelease.length
    end

    # Numeric identifiers compare as numbers and sort before alphanumeric ones.
    def compare_identifier(a, b)
      a_num = a.match?(/\A\d+\z/)
      b_num = b.match?(/\A\d+\z/)
      return a.to_i <=> b.to_i if a_num && b_num
      return -1 if a_num
      return 1 if b_num

      a <=> b
    end
  end
end
