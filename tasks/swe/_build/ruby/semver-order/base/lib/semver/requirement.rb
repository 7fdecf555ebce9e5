# frozen_string_literal: true

module Semver
  # A requirement: one or more comma-separated constraints that must all hold.
  # Operators: =, !=, >, >=, <, <=, ~> (pessimistic), ^ (compatible).
  class Requirement
    OPS = %w[>= <= != ~> > < = ^].freeze

    def self.parse(text)
      parts = text.to_s.split(",").map(&:strip).reject(&:empty?)
      raise ParseError, "empty requirement" if parts.empty?

      new(parts.map { |p| parse_constraint(p) })
    end

    def self.parse_constraint(text)
      op = OPS.find { |o| text.start_with?(o) } || "="
      rest = text.delete_prefix(op).strip
      segments = rest.split(".").length
      rest = (rest.split(".") + %w[0 0]).first(3).join(".") if segments < 3 && !rest.include?("-")
      [op, Version.parse(rest), segments]
    end

    def initialize(constraints)
      @constraints = constraints
    end

    def satisfied_by?(version)
      @constraints.all? { |op, v, segments| check(op, v, segments, version) }
    end

    private

    def check(op, req, segments, version)
      case op
      when "=" then version == req
      when "!=" then version != req
      when ">" then version > req
      when ">=" then version >= req
      when "<" then version < req
      when "<=" then version <= req
      when "~>" then version >= req && version < pessimistic_ceiling(req, segments)
      when "^" then version >= req && version < caret_ceiling(req)
      end
    end

    def pessimistic_ceiling(req, segments)
      segments <= 2 ? Version.new(req.major + 1, 0, 0) : Version.new(req.major, req.minor + 1, 0)
    end

    def caret_ceiling(req)
      return Version.new(req.major + 1, 0, 0) if req.major.positive?
      return Version.new(0, req.minor + 1, 0) if req.minor.positive?

      Version.new(0, 0, req.patch + 1)
    end
  end
end
