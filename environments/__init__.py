"""Environment families. Each subpackage registers a `envhub.env.Family` entry point."""
