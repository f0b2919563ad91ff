"""Budget: steps counted at the tool boundary, tokens from reported usage, wall time."""

import time

import pytest

from ontrial.gateway import Budget, BudgetExceeded
from ontrial.models.trial import BudgetKind


def test_step_past_the_limit_is_refused_and_not_counted() -> None:
    budget = Budget(steps=2)
    assert budget.charge_step() == 1
    assert budget.charge_step() == 2
    with pytest.raises(BudgetExceeded) as err:
        budget.charge_step()
    assert err.value.kind is BudgetKind.steps
    assert budget.used_steps == 2
    assert budget.exhausted is BudgetKind.steps
    assert "steps budget exhausted" in str(err.value)


def test_tokens_over_the_limit_raise() -> None:
    budget = Budget(tokens=100)
    budget.add_tokens(40, 60)
    assert budget.used_tokens == 100
    with pytest.raises(BudgetExceeded) as err:
        budget.add_tokens(1, 0)
    assert err.value.kind is BudgetKind.tokens
    assert budget.usage().tokens == 101


def test_wall_budget() -> None:
    budget = Budget(wall_seconds=0.01)
    time.sleep(0.02)
    with pytest.raises(BudgetExceeded) as err:
        budget.charge_step()
    assert err.value.kind is BudgetKind.wall
    budget.start()
    assert budget.charge_step() == 1


def test_unlimited_and_from_limits() -> None:
    budget = Budget()
    for _ in range(1000):
        budget.charge_step()
    budget.add_tokens(10**9, 0)
    limits = Budget.from_limits({"steps": 3, "tokens": 5, "wall_seconds": 1.5})
    assert (limits.steps, limits.tokens, limits.wall_seconds) == (3, 5, 1.5)
    assert Budget.from_limits(None).steps is None
    assert budget.usage().steps == 1000


def test_exceeded_reports_what_ran_out_for_outside_watchers() -> None:
    budget = Budget(steps=1, wall_seconds=60)
    assert budget.exceeded() is None
    budget.charge_step()
    with pytest.raises(BudgetExceeded):
        budget.charge_step()
    err = budget.exceeded()
    assert err is not None and err.kind is BudgetKind.steps and err.limit == 1
    late = Budget(wall_seconds=0.001)
    time.sleep(0.01)
    assert late.exceeded().kind is BudgetKind.wall
