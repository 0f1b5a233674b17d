"""Alembic environment for the store: runs revisions on the connection the Store hands over.

:func:`devops_agent.store.engine.upgrade_to_head` opens the transaction (holding the migration
lock) and passes its connection in ``config.attributes["connection"]``; there is no alembic.ini.
This module must not create engines, read URLs, or call ``logging.config.fileConfig`` (that
would reset the application's logging).
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from devops_agent.store.models import Base

if context.is_offline_mode():
    raise RuntimeError("the store's migrations run online only, through devops_agent.store.Store")

connection = context.config.attributes.get("connection")
if not isinstance(connection, Connection):
    raise RuntimeError(
        "run the store's migrations through devops_agent.store.Store, which passes a connection"
    )

context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    # SQLite cannot ALTER most things; batch mode recreates the table instead.
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)

with context.begin_transaction():
    context.run_migrations()
