defmodule Timeline.MixProject do
  use Mix.Project

  def project do
    [app: :timeline, version: "1.1.0", elixir: "~> 1.14", start_permanent: false, deps: []]
  end

  def application, do: [extra_applications: []]
end
