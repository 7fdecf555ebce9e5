"""Episodes keep the verifier's second verdict on their final state (`episodes.reverify`, JSON): the
episodes a trainer sampled for re-verification (`POST /v1/sessions/{id}/reverify`), from which a
run's `verifier_disagreement` is counted.

Nullable, added in place with every row kept; a store whose episodes already have the column (made
by `create_all` from today's models before migrations) is left as it is.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("episodes")}
    if "reverify" not in have:
        op.add_column("episodes", sa.Column("reverify", sa.JSON(), nullable=True))


def downgrade() -> None:
    op.drop_column("episodes", "reverify")
