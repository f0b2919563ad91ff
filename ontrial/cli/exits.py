"""Exit codes of the ``ontrial`` command.

- 0: ``run`` / ``gate``: the gate passed, or the suite only reports (capability); other commands: done.
- 1: ``run`` / ``gate``: the gate failed (a regression or a new safety failure, not overridden).
- 2: bad input: an unreadable task file, an unknown agent or run id, a refused override (one line on stderr).
- 3: inconclusive: too many infra errors, trials cancelled, a missing baseline run, or the stack (Temporal,
  the cluster) could not be reached or the run was interrupted — no verdict about the agent.

With several suites in one ``run`` (one per agent), a failed gate wins over an inconclusive one.
"""

from ..models.suite import GateVerdict

EXIT_OK = 0
EXIT_GATE_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INCONCLUSIVE = 3
EXIT_INFRA = EXIT_INCONCLUSIVE  # infra trouble never yields a verdict


def exit_code(verdicts: list[GateVerdict]) -> int:
    """The exit code for the effective gate verdicts of one invocation's suites."""
    if GateVerdict.failed in verdicts:
        return EXIT_GATE_FAILED
    if GateVerdict.inconclusive in verdicts or not verdicts:
        return EXIT_INCONCLUSIVE
    return EXIT_OK
