"""Golden tasks: the schema, the loader (errors as ``file:line: field: message``) and content hashes."""

from .checks_model import CHECK_TYPES, OutcomeCheck
from .loader import collect, collect_many, load_task, load_tasks, task_hash
from .model import SCHEMA_VERSION, Task
from .problems import TaskFileError, TaskProblem

__all__ = [
    "CHECK_TYPES",
    "OutcomeCheck",
    "SCHEMA_VERSION",
    "Task",
    "TaskFileError",
    "TaskProblem",
    "collect",
    "collect_many",
    "load_task",
    "load_tasks",
    "task_hash",
]
