"""The db family: business databases behind typed CRUD tools, verified on final state.

The served classes are `family.py`'s (the judged ones plus copying a live episode): the entry point
`environments.db:DbFamily` names this package, so it must resolve to them too."""

from environments.db.family import DbEnvironment, DbFamily

__all__ = ["DbEnvironment", "DbFamily"]
