# frozen_string_literal: true

require_relative "semver/version"
require_relative "semver/requirement"

# Semantic versions (https://semver.org) and version requirements such as "~> 1.2" or "^2.0.1".
module Semver
  class ParseError < ArgumentError; end

  def self.parse(text) = Version.parse(text)

  # The highest version in `versions` satisfying `requirement`, or nil.
  def self.max_satisfying(versions, requirement)
    req = Requirement.parse(requirement)
    versions.map { |v| Version.parse(v) }.select { |v| req.satisfied_by?(v) }.max&.to_s
  end

  def self.sort(versions) = versions.map { |v| Version.parse(v) }.sort.map(&:to_s)
end
