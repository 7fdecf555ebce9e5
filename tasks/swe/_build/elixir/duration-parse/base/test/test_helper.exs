Code.require_file("support/junit_formatter.exs", __DIR__)
ExUnit.start(formatters: [ExUnit.CLIFormatter, Envhub.JUnitFormatter], seed: 0)
