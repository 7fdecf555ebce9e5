defmodule Duration.MixProject do
  use Mix.Project

  def project do
    [app: :duration, version: "0.5.0", elixir: "~> 1.14", start_permanent: false, deps: []]
  end

  def application, do: [extra_applications: []]
end
