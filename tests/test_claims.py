"""Every registered claim, at the quick budget: a new claim is tested the moment it is registered."""
import pytest

from paper_checks import claims

ALL = claims()


def test_registry_is_not_empty():
    assert ALL, "no claims registered: the suite would verify nothing"


def _run(claim, budget):
    result = claim.run(budget)
    status = claim.status(result)
    print(f"{claim.id}: predicted={result.predicted} measured={result.measured} "
          f"tolerance={result.tolerance} status={status} seed={result.seed}\n  {result.detail}")
    assert result.passed, f"{claim.id} ({status}): {result.detail}"


@pytest.mark.parametrize("claim", ALL, ids=[c.id for c in ALL])
def test_claim_quick(claim):
    _run(claim, "quick")


@pytest.mark.slow
@pytest.mark.parametrize("claim", ALL, ids=[c.id for c in ALL])
def test_claim_full(claim):
    _run(claim, "full")
