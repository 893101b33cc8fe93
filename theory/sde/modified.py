r"""Modified equations of gradient descent and the 1-D toy functions (closed forms in sympy).

The drifts :math:`b_1 = -\nabla f`, :math:`b_2 = -\nabla f - \tfrac{\eta}{2}\nabla^2 f\,\nabla f` and the
curvature-corrected :math:`b_c = -\nabla f + \tfrac{\eta}{2}\nabla^2 f\,\nabla f`; the one-step Taylor quotient
and the energy rate along a drift; the toy functions (quadratic, quartic, :math:`2\cosh x`, log-cosh) shared by
the other modules of :mod:`theory.sde`, with the validation of sympy input and of positive reals.
"""
from __future__ import annotations

import sympy as sp

from theory.validate import choice, real

__all__ = [
    "DRIFT_KINDS", "ESCAPE_KINDS", "NOISE_LAWS", "TOY_FUNCTIONS", "ETA", "X", "gradient", "hessian", "drift",
    "modified_drifts", "taylor_quotient", "energy_rate", "toy_function"
]


DRIFT_KINDS = ("first_order", "second_order", "corrected")
ESCAPE_KINDS = ("gd",) + DRIFT_KINDS
NOISE_LAWS = ("gaussian", "student_t", "cauchy")
TOY_FUNCTIONS = ("quadratic", "quartic", "cosh2", "logcosh")
ETA = sp.Symbol("eta", positive=True)
X = sp.Symbol("x", real=True)
_LAM = sp.Symbol("lambda", positive=True)


# ----------------------------------------------------------------------------- validation of sympy input

def _variables(f, variables) -> tuple[sp.Symbol, ...]:
    if not isinstance(f, sp.Expr):
        raise TypeError(f"f: expected a sympy expression, got {type(f).__name__}")
    if isinstance(variables, sp.Symbol):
        variables = (variables,)
    try:
        variables = tuple(variables)
    except TypeError:
        raise TypeError(f"variables: expected a sympy Symbol or a sequence of Symbols, got {variables!r}") from None
    if not variables:
        raise ValueError("variables: expected at least one sympy Symbol, got an empty sequence")
    for v in variables:
        if not isinstance(v, sp.Symbol):
            raise TypeError(f"variables: every entry must be a sympy Symbol, got {v!r} ({type(v).__name__})")
    if len(set(variables)) != len(variables):
        raise ValueError(f"variables: symbols must be distinct, got {variables}")
    return variables


def _symbol(name: str, x, *, positive: bool = True):
    """A sympy expression, or a real number (> 0 when ``positive``) turned into an exact sympy number."""
    if isinstance(x, sp.Expr):
        if x.is_number and positive and not bool(x > 0):
            raise ValueError(f"{name}: expected a positive value, got {x}")
        return x
    value = real(name, x, low=0.0, low_open=positive) if positive else real(name, x)
    return sp.nsimplify(value)


def _pos(name: str, x, *, zero: bool = False) -> float:
    """A finite real number > 0 (>= 0 with ``zero``)."""
    return real(name, x, low=0.0, low_open=not zero)


# ----------------------------------------------------------------------------- modified equations

def gradient(f: sp.Expr, variables) -> sp.Matrix:
    r"""Column vector :math:`\nabla f` with respect to ``variables``."""
    variables = _variables(f, variables)
    return sp.Matrix([sp.diff(f, v) for v in variables])


def hessian(f: sp.Expr, variables) -> sp.Matrix:
    r"""Matrix :math:`\nabla^2 f`."""
    variables = _variables(f, variables)
    return sp.hessian(f, variables)


def drift(f: sp.Expr, variables, kind: str, eta: sp.Expr = ETA) -> sp.Matrix:
    r"""Drift of a modified equation of GD on ``f``.

    ``first_order``: :math:`-\nabla f`; ``second_order``: :math:`-\nabla f - \tfrac{\eta}{2}\nabla^2 f\nabla f`
    (the gradient flow of :math:`f + \tfrac{\eta}{4}\|\nabla f\|^2`); ``corrected``:
    :math:`-\nabla f + \tfrac{\eta}{2}\nabla^2 f\nabla f`.
    """
    variables = _variables(f, variables)
    choice("kind", kind, DRIFT_KINDS)
    eta = _symbol("eta", eta)
    g = gradient(f, variables)
    if kind == "first_order":
        return -g
    if kind == "second_order":
        # Derived as a gradient so the tests can compare it with -H g/2 exactly.
        return -gradient(f + eta / 4 * (g.T * g)[0, 0], variables)
    return -g + eta / 2 * hessian(f, variables) * g


def modified_drifts(f: sp.Expr, variables, eta: sp.Expr = ETA) -> dict[str, sp.Matrix]:
    """All three drifts, keyed by :data:`DRIFT_KINDS`."""
    return {k: drift(f, variables, k, eta) for k in DRIFT_KINDS}


def taylor_quotient(f: sp.Expr, variables, eta: sp.Expr = ETA) -> sp.Expr:
    r"""One-step decrease of GD to first order in :math:`\eta`:
    :math:`[f(x-\eta\nabla f)-f(x)]/\eta = -\|\nabla f\|^2 + \tfrac{\eta}{2}\nabla f^\top\nabla^2 f\nabla f + O(\eta^2)`,
    obtained by a sympy series in :math:`\eta` (truncated after the linear term)."""
    variables = _variables(f, variables)
    eta = _symbol("eta", eta)
    if not isinstance(eta, sp.Symbol):
        raise TypeError(f"eta: the series needs a sympy Symbol, got {eta!r}")
    g = gradient(f, variables)
    step = {v: v - eta * g[i] for i, v in enumerate(variables)}
    quotient = (f.subs(step, simultaneous=True) - f) / eta
    return sp.expand(sp.series(quotient, eta, 0, 2).removeO())


def energy_rate(f: sp.Expr, variables, kind: str, eta: sp.Expr = ETA) -> sp.Expr:
    r""":math:`\tfrac{d}{dt} f(X_t) = \nabla f^\top b` along the deterministic modified equation ``kind``."""
    variables = _variables(f, variables)
    return sp.expand((gradient(f, variables).T * drift(f, variables, kind, eta))[0, 0])


def toy_function(name: str, x: sp.Symbol = X, lam: sp.Expr = _LAM) -> sp.Expr:
    r"""The 1-D test functions: ``quadratic`` :math:`\lambda x^2/2`, ``quartic`` :math:`x^4/4`,
    ``cosh2`` :math:`2\cosh x`, ``logcosh`` :math:`\log\cosh x`."""
    choice("name", name, TOY_FUNCTIONS)
    if not isinstance(x, sp.Symbol):
        raise TypeError(f"x: expected a sympy Symbol, got {x!r}")
    lam = _symbol("lam", lam)
    table = {"quadratic": lam * x**2 / 2, "quartic": x**4 / 4, "cosh2": 2 * sp.cosh(x), "logcosh": sp.log(sp.cosh(x))}
    return table[name]
