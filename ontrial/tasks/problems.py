"""What is wrong with a task file, as one line a task author can act on: ``file:line: field: message``."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ConfigError


@dataclass(frozen=True, order=True)
class TaskProblem:
    file: str
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"


class TaskFileError(ConfigError):
    """A task file (or a file it references) is invalid. ``str()`` is the first problem, one line.

    ``problems`` holds every problem found: the task file's first (by line), then referenced files'.
    """

    def __init__(self, problems: list[TaskProblem]):
        if not problems:
            raise ValueError("TaskFileError needs at least one problem")
        self.problems = list(problems)
        first = self.problems[0]
        super().__init__(str(first))
        self.file = first.file
        self.line = first.line
        self.field = first.field
        self.message = first.message
