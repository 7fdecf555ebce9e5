"""Task folders: the schema, the catalogue that loads them, and importers."""

from envhub.tasks.catalog import Catalog
from envhub.tasks.model import Task, TaskConfig

__all__ = ["Catalog", "Task", "TaskConfig"]
