"""The HTTP server: app factory, routes, the session manager and error translation."""
