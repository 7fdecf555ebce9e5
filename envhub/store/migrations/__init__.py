"""The episode store's schema history, as Alembic migrations (`versions/`, run by `env.py`).

`envhub.store.db.create_schema` upgrades every store to the head at its first use, SQLite and
PostgreSQL alike. A schema change is a new revision here, beside the change to `envhub.store.models`:

    alembic -c envhub/store/migrations/alembic.ini revision -m "what changes"   # then write upgrade()

(`ENVHUB_DATABASE_URL`, else this checkout's SQLite store, is the database the `alembic` command
reads; `--autogenerate` drafts the operations from the models.) `tests/store/test_migrations.py`
fails while the models and the head revision differ.
"""

from pathlib import Path

#: The folder Alembic's `script_location` names.
LOCATION = Path(__file__).resolve().parent
