"""Statistics for agent evals, as pure functions: the incident (task) is the unit of evidence."""

from .estimators import pass_at_k, pass_hat_k, suite_pass_at_k, suite_pass_hat_k
from .intervals import clustered_se, mean_ci, wilson
from .paired import PairedComparison, mcnemar_exact, minimum_detectable_effect, paired_difference

__all__ = [
    "pass_at_k",
    "pass_hat_k",
    "suite_pass_at_k",
    "suite_pass_hat_k",
    "wilson",
    "clustered_se",
    "mean_ci",
    "mcnemar_exact",
    "paired_difference",
    "minimum_detectable_effect",
    "PairedComparison",
]
