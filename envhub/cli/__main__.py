"""`python -m envhub.cli`, as the `envhub` console script."""

from envhub.cli import main

main()
