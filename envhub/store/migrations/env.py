"""Alembic's environment for the episode store.

`envhub.store.db.create_schema` hands it a connection in a transaction (`config.attributes
["connection"]`); the `alembic` command (new revisions) opens one on `ENVHUB_DATABASE_URL`, else on
this checkout's SQLite store.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from envhub.store.models import Base


def run(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=Base.metadata,
                      render_as_batch=connection.dialect.name == "sqlite")  # SQLite alters a table by copying it
    with context.begin_transaction():
        context.run_migrations()


given = context.config.attributes.get("connection")
if given is not None:
    run(given)
elif context.is_offline_mode():
    raise SystemExit("the episode store's migrations run on a database, not as SQL text (no --sql)")
else:
    from envhub.config import get_settings
    from envhub.store.db import make_engine

    engine = make_engine(get_settings().store_url)
    try:
        with engine.begin() as conn:
            run(conn)
    finally:
        engine.dispose()
