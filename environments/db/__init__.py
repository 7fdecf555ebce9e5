"""The db family: business databases behind typed CRUD tools, verified on final state."""

from environments.db.env import DbEnvironment, DbFamily

__all__ = ["DbEnvironment", "DbFamily"]
