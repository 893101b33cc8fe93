"""Every registered claim at the quick budget: the prediction is accepted and every rival rejected.

This is the suite's power test: a claim whose measurement at the quick budget cannot tell it from
its rival is ``inconclusive`` and fails here, as does a claim with no rival, a failed prediction,
or an error. Test ids carry the topic, so ``pytest -k logistic`` selects a topic's claims.
"""
import pytest

from paper_checks import OK_STATUSES, claims, import_errors, run_claim

ALL = claims()
IDS = [f"{c.topic}:{c.id}" for c in ALL]


def test_registry_is_not_empty():
    assert ALL, "no claims registered: the suite would verify nothing"


def test_every_topic_imports():
    errors = import_errors()
    assert not errors, "\n".join(f"topic {t} failed to import:\n{tb}" for t, tb in errors.items())


def _run(claim, budget):
    o = run_claim(claim, budget)
    assert o.result is not None, f"{claim.id} raised:\n{o.error}"
    lines = [f"{claim.id}: {o.status} ({o.wall_s:.1f} s, seed {o.result.seed})  {o.result.detail}"]
    for c in o.result.checks:
        p = c.prediction()
        lines.append(f"  [{c.kind}] {c.quantity}: predicted {c.predicted_value()} measured {c.measured_value()} "
                     f"({c.tolerance_text()}) -> {'accepted' if p.accepted else 'REJECTED'}, {p.text}")
        for a in c.rival_assessments():
            lines.append(f"    rival '{a.label}': {'ACCEPTED' if a.accepted else 'rejected'}, {a.text}")
        if c.paper is not None:
            a = c.paper_assessment()
            lines.append(f"    paper {a.value}: {'accepted' if a.accepted else 'rejected'}, {a.text}")
    report = "\n".join(lines)
    print(report)
    assert not o.error, f"{claim.id} breaks the claim contract: {o.error}\n{report}"
    assert o.status in OK_STATUSES, f"{claim.id} is {o.status}\n{report}"
    rivals = [a for c in o.result.checks for a in c.rival_assessments()]
    assert all(not a.accepted for a in rivals), report


@pytest.mark.parametrize("claim", ALL, ids=IDS)
def test_prediction_accepted_and_rivals_rejected_quick(claim):
    _run(claim, "quick")


@pytest.mark.slow
@pytest.mark.parametrize("claim", ALL, ids=IDS)
def test_prediction_accepted_and_rivals_rejected_full(claim):
    _run(claim, "full")
