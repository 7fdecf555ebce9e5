"""Episodes name the session they were forked from and the step they branched at
(`episodes.parent_id`, `episodes.forked_at_step`; `POST /v1/sessions/{id}/fork`).

Nullable, added in place with every row kept (an episode from a reset has neither); a store whose
episodes already have the columns (made by `create_all` from today's models) is left as it is.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("episodes")}
    if "parent_id" not in have:
        op.add_column("episodes", sa.Column("parent_id", sa.String(64), nullable=True))
    if "forked_at_step" not in have:
        op.add_column("episodes", sa.Column("forked_at_step", sa.Integer(), nullable=True))


def downgrade() -> None:
    op.drop_column("episodes", "forked_at_step")
    op.drop_column("episodes", "parent_id")
