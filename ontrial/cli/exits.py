"""Exit codes of the ``ontrial`` command.

0: every trial reached a verdict about the agent (passed or not). 1: infra trouble (a trial ended
infra_error or cancelled, or the stack could not start). 2: bad input (one clear line on stderr).
"""

EXIT_OK = 0
EXIT_INFRA = 1
EXIT_BAD_INPUT = 2
