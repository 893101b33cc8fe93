"""Paper checks: one module (or package) per topic, each registering the claims of its paper.

``python -m paper_checks [--paper KEY] [--claim ID] [--topic T] [--budget quick|full] [--json]`` runs
them and prints the verification table; the exit code is non-zero if any claim is failed,
inconclusive or error.
"""
from paper_checks._checks import (  # noqa: F401
    Bound, Categorical, Check, Count, Exact, Rate, Statistical, fit_slope, mean_se, ratio_se, standard_error,
)
from paper_checks._registry import (  # noqa: F401
    BUDGETS, COARSE, KINDS, OK_STATUSES, PROVENANCES, QUANTITATIVE, STATUSES, STEPLAB, Budget, Claim, Paper, Result, as_budget, check_budget,
    claim, claims, get_claim, import_errors, load_all, papers, topics,
)
from paper_checks._experiment import Experiment, experiment, experiments  # noqa: F401
from paper_checks._runner import (  # noqa: F401
    Outcome, exit_code, format_table, run_claim, run_claims, summary_counts, to_json, to_records,
)
from paper_checks._dispatch import Task, dispatch, make_executor, plan, run_task  # noqa: F401,E402
