"""The example scripts (examples/<topic>.py): each reruns its claim on user parameters.

Each script is imported (not run in a subprocess, except one CLI smoke test) and its ``run`` called
on small, fast parameters: the verdict must be ``passed`` -- every prediction accepted, every rival
rejected -- and bad parameters must raise an error that names the parameter.
"""
from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

def _topics() -> tuple[str, ...]:
    """Every topic, as the results cache finds them (modules and packages of paper_checks): none listed by hand."""
    from sims.cache import topic_names

    return topic_names()


TOPICS = _topics()


def _load(name: str):
    """Import examples/<name>.py under a private module name (the scripts import ``_common`` by name)."""
    key = "_common" if name == "_common" else f"steplab_example_{name}"
    if key in sys.modules:
        return sys.modules[key]
    if name != "_common":
        _load("_common")
    spec = importlib.util.spec_from_file_location(key, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    spec.loader.exec_module(module)
    return module


def _assert_passed(out: dict) -> None:
    for check in out["checks"]:
        assert check.prediction().accepted, (check.quantity, check.prediction().text)
        for rival in check.rival_assessments():
            assert not rival.accepted, (check.quantity, rival.label, rival.text)
    assert out["status"] == "passed"
    assert out["claim"] and out["statement"]


def _check_types() -> set[str]:
    """Names of :class:`paper_checks.Check` and every subclass of it (Exact, Bound, Rate, ...)."""
    from paper_checks import Check
    found, todo = set(), [Check]
    while todo:
        cls = todo.pop()
        found.add(cls.__name__)
        todo.extend(cls.__subclasses__())
    return found


def _built_checks(path: Path, kinds: set[str]) -> list[str]:
    """Where ``path`` constructs a typed check or defines rivals: ``line: what`` per offence.

    A call counts whether the class is imported by name, under an alias, or reached as an attribute
    (``paper_checks.Exact``); rivals are a ``rivals=`` keyword or a name bound to ``rivals``.
    """
    tree = ast.parse(path.read_text())
    aliases = {a.asname: a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
               for a in node.names if a.asname}
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if aliases.get(name, name) in kinds:
                hits.append(f"{node.lineno}: builds {aliases.get(name, name)}")
            hits += [f"{node.lineno}: passes rivals=" for k in node.keywords if k.arg == "rivals"]
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and "rival" in node.id.lower():
            hits.append(f"{node.lineno}: defines {node.id}")
    return hits


def test_examples_build_no_checks_of_their_own():
    """A claim's checks and rivals are written once, in its module's core function: an example calls that core,
    so the two cannot drift apart."""
    kinds = _check_types()
    assert {"Exact", "Bound", "Rate", "Statistical", "Count", "Categorical"} <= kinds
    offences = {p.name: hits for p in sorted(EXAMPLES.glob("*.py")) if (hits := _built_checks(p, kinds))}
    assert not offences, offences


def test_an_example_follows_its_claims_core(monkeypatch):
    """A mistake in a claim's core (here the per-run ratio taken upside down, Var x / Var EMA) turns its example red
    as well: the example keeps no statistics or checks of its own to stay green with."""
    from paper_checks.noisy_quadratic import averaging
    right = averaging._ratio_stats
    monkeypatch.setattr(averaging, "_ratio_stats", lambda num, den: right(den, num))
    out = _load("noisy_quadratic").run(alpha=(0.1, 0.3), eta=0.2, lam=1.0, n_chains=32, n_steps=4000, burn=1000)
    assert out["status"] == "failed"


def test_every_topic_has_a_documented_example():
    readme = (EXAMPLES / "README.md").read_text()
    for topic in TOPICS:
        module = _load(topic)
        assert module.__doc__ and module.CLAIM in module.__doc__, topic
        assert f"examples/{topic}.py" in readme, topic
        assert len((EXAMPLES / f"{topic}.py").read_text().splitlines()) <= 125, topic


def test_logistic():
    ex = _load("logistic")
    out = ex.run([1.0, -1.0], [0.75, 0.25], n_inits=2)
    _assert_passed(out)
    assert np.all((out["distance"].max(axis=1) < 1e-11) == (out["c"] < 2))
    with pytest.raises(ValueError, match="weights"):
        ex.run([1.0, -1.0, 2.0], [0.5, 0.5])
    with pytest.raises(ValueError, match="eta"):
        ex.run([1.0, -1.0], [0.75, 0.25], eta=[20.0, 30.0])


def test_sde():
    ex = _load("sde")
    out = ex.run(a=2.0, omega=(0.0, 1.0, 3.0, 0.5), sigma1=0.7, n_paths=128)
    _assert_passed(out)
    assert out["n_dropped"] == 0
    with pytest.raises(ValueError, match="omega"):
        ex.run(omega=(1.0, -1.0))
    with pytest.raises(ValueError, match="omega, sigma1"):
        ex.run(omega=0.0, sigma1=0.0)


def test_sign_floor():
    ex = _load("sign_floor")
    out = ex.run(a=1.0, eta=(0.1, 0.5, 2.0), sigma=1.0, n_chains=128)
    _assert_passed(out)
    with pytest.raises(ValueError, match="burn"):
        ex.run(eta=0.01)
    with pytest.raises(ValueError, match="a, eta, sigma"):
        ex.run(a=(1.0, 2.0), eta=(0.1, 0.2, 0.3))


def test_sgd_stability():
    ex = _load("sgd_stability")
    X = [[1.0, 0.2], [0.3, 1.0], [-0.5, 0.8], [1.2, -0.4], [0.1, 0.9]]
    out = ex.run(X=X, batch_sizes=[1, 2, 5], n_rounds=5)
    _assert_passed(out)
    assert np.all(np.diff(out["measured"]) > 0)
    with pytest.raises(ValueError, match="batch_sizes"):
        ex.run(X=X, batch_sizes=[0, 2])
    with pytest.raises(ValueError, match="hessians"):
        ex.run(np.array([[[1.0, 2.0], [0.0, 1.0]]]))


def test_linear_hessian():
    ex = _load("linear_hessian")
    out = ex.run(counts=(50, 30, 20), depth=2, ratios=(0.98, 1.02))
    _assert_passed(out)
    with pytest.raises(ValueError, match="counts"):
        ex.run(counts=(1.5, 2.0))
    with pytest.raises(ValueError, match="ratios"):
        ex.run(ratios=(-1.0,))


def test_softmax_radius():
    ex = _load("softmax_radius")
    out = ex.run(delta=(0.5, -2.0, 3.5), delta_a=(1.0, -0.4, 2.5))
    _assert_passed(out)
    np.testing.assert_allclose(np.abs(out["ghost"]), out["radius"], rtol=1e-2)
    with pytest.raises(ValueError, match="delta_a"):
        ex.run(delta=(1.0, 2.0), delta_a=(0.0, 1.0))


def test_eos():
    ex = _load("eos")
    out = ex.run(eta_a=(1.8, 1.9), beta=0.1, eta=0.5)
    _assert_passed(out)
    with pytest.raises(ValueError, match="eta_a"):
        ex.run(eta_a=1.7)


def test_noisy_quadratic():
    ex = _load("noisy_quadratic")
    out = ex.run(alpha=(0.1, 0.3), eta=0.2, lam=1.0, n_chains=32, n_steps=4000, burn=1000)
    _assert_passed(out)
    with pytest.raises(ValueError, match="alpha"):
        ex.run(alpha=(0.0, 0.5))
    with pytest.raises(ValueError, match="eta, lam"):
        ex.run(eta=3.0)


def test_batch_size():
    ex = _load("batch_size")
    out = ex.run(d=60, p=1.0, target=0.1, x=(0.03, 1.0))
    _assert_passed(out)
    assert ex.run(d=60, p=1.0, target=0.1, x=(10.0,))["status"] == "failed"   # far above B_crit: outside the window
    with pytest.raises(ValueError, match="target"):
        ex.run(target=1.5)


def test_lr_horizon():
    ex = _load("lr_horizon")
    _assert_passed(ex.run(beta=2.0, s=2.0, sigma2=1.0, horizons=(1e4, 1e5, 1e6)))
    # near the stability cap the law's own first-order correction is O(1): the band swallows every rival
    assert ex.run(beta=2.0, s=0.5, sigma2=0.02, horizons=(10, 30, 100))["status"] == "inconclusive"
    with pytest.raises(ValueError, match="horizons"):
        ex.run(horizons=(100, 10, 1000))


def test_mup_transfer():
    ex = _load("mup_transfer")
    _assert_passed(ex.run(d=8, m=32, widths=(1024, 4096, 16384), n_seeds=64))
    # narrow widths: the seed spread grows and the 1/n fit bends, so kappa = 1 and kappa = 1 + 1/d stay inside the
    # band (0.88 and 0.14 x band at seed 0; inconclusive at seeds 0-4 alike). At widths (16, 32, 64) it passes: the
    # fit's next order is inside 4 SE there, so narrow widths are no "failed" case (that had held for one stream only)
    out = ex.run(d=8, m=32, widths=(10, 20, 40), n_seeds=4096)
    assert out["status"] == "inconclusive"
    with pytest.raises(ValueError, match="widths"):
        ex.run(widths=(4096, 1024, 16384))


def test_cli_bad_parameter_exits_with_usage_error(capsys):
    ex = _load("softmax_radius")
    with pytest.raises(SystemExit) as exc:
        ex.main(["--delta", "1,2", "--delta-a", "0,1"])
    assert exc.value.code == 2
    assert "delta_a" in capsys.readouterr().err


def test_cli_smoke():
    """One script end to end as a user runs it: exit 0, the verdict printed."""
    proc = subprocess.run([sys.executable, str(EXAMPLES / "logistic.py"), "--n-inits", "1"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "status on your parameters: passed" in proc.stdout


def test_adaptive_eos():
    ex = _load("adaptive_eos")
    out = ex.run(beta1=(0.0, 0.9), d=3, n_grid=8, rounds=3)
    _assert_passed(out)
    with pytest.raises(ValueError, match="beta1"):
        ex.run(beta1=(0.99,))


def test_low_precision():
    ex = _load("low_precision")
    out = ex.run(eta_a=(0.02, 0.1, 0.4), w_star=(1.0, 1.5), n=60)
    _assert_passed(out)
    with pytest.raises(ValueError, match="eta_a"):
        ex.run(eta_a=1.5)
    with pytest.raises(ValueError, match="w_star, w0"):
        ex.run(w_star=(1.5, 2.5))


def test_muon():
    ex = _load("muon")
    out = ex.run(s=(4.0, 3.0, 2.0), lam=2.0, eta=0.02, steps=(3, 5), rows=5, n_steps=20)
    _assert_passed(out)
    assert np.all(out["settled"] > 0) and out["settled"].shape == (2,)
    with pytest.raises(ValueError, match="eta, lam"):
        ex.run(eta=1.0)
    with pytest.raises(ValueError, match="s:"):
        ex.run(s=(4.0, 0.2))
