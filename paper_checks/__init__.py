"""Paper checks: one module per topic, each registering the claims of its paper.

``python -m paper_checks [--paper KEY] [--claim ID] [--budget quick|full] [--json]`` runs them and
prints the verification table; the exit code is non-zero if any claim fails or errors.
"""
from paper_checks._registry import (  # noqa: F401
    BUDGETS, KINDS, PROVENANCES, Claim, Paper, Result, check_budget, claim, claims, get_claim, load_all,
)
from paper_checks._runner import Outcome, format_table, run_claim, run_claims, to_json  # noqa: F401
