r"""Typed comparisons: the only way a claim can reach a verdict.

A claim's check returns one or more of the comparisons below. Each holds a *measurement*
(obtained by simulation), the *prediction* (steplab's closed form), the rule that decides whether a
predicted value is compatible with the measurement, and *rivals*: the most plausible wrong
statements a reader might hold, evaluated by the **same rule on the same measurement**. A claim
passes only if every prediction is accepted and every rival rejected; where a rival survives, the
measurement could not tell the claim from its rival and the verdict is ``inconclusive``.

``paper=`` records the value the paper states for the quantity when it differs from steplab's
prediction (or when steplab's maths contradicts it). It is evaluated like a rival; when it is
rejected the claim is reported ``refutes paper`` or ``differs from paper``. A paper value never
stands alone: it needs ``quote=`` (the paper's verbatim words that state it) and ``where=`` (arXiv
id and section, theorem, equation, figure, table or "abstract"), or the check refuses to be built.
A reading that is steplab's own (a threshold, a count, "most") is a rival, never ``paper=``.

Every check reports its *resolution* (:meth:`Check.resolution`): the smallest relative change of
the prediction that its own rule rejects, found on the rule itself, never declared. A check with
a 40 % resolution cannot tell its prediction from one that is 30 % off, however many rivals it
rejects.

Kinds of comparison:

* :class:`Exact` -- two-sided, :math:`|m - p| \le \mathrm{atol} + \mathrm{rtol}\,|p|` (elementwise).
* :class:`Bound` -- one-sided, :math:`m \le b + s` (``side="<="``) or :math:`m \ge b - s`.
* :class:`Rate` -- log-log slope from :func:`fit_slope` with its standard error; the band is
  :math:`z\,\mathrm{SE} + \text{next-order term}`.
* :class:`Statistical` -- a Monte Carlo estimate with standard error: :math:`|\hat m - p| \le z\,\mathrm{SE} + \text{bias}`.
* :class:`Count` -- per-item outcomes; at least ``required`` items agree with the prediction.
* :class:`Categorical` -- discrete outcomes (attractor periods, orderings) equal the prediction.

Every tolerance, band and bias has a reason; pass it as ``why=`` so the report shows it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

import numpy as np

__all__ = [
    "Check", "Exact", "Bound", "Rate", "Statistical", "Count", "Categorical", "Assessment",
    "fit_slope", "standard_error", "mean_se", "ratio_se", "CHECK_KINDS",
]


@dataclass(frozen=True)
class Assessment:
    """How one candidate value (prediction, rival or paper value) fares against the measurement.

    ``score`` is the distance from the measurement in units of the acceptance band: the value is
    accepted iff ``score <= 1``. ``text`` says the same in words (e.g. ``"12.3 x tolerance"``).
    """

    label: str
    value: Any
    accepted: bool
    score: float
    text: str

    def __post_init__(self) -> None:
        # a check's rule often yields a NumPy bool, which JSON would write as the string "False" (truthy to a reader)
        object.__setattr__(self, "accepted", bool(self.accepted))

    def to_dict(self) -> dict:
        return {"label": self.label, "value": _jsonable(self.value), "accepted": self.accepted,
                "score": _jsonable(self.score), "margin": self.text}


def _jsonable(x: Any) -> Any:
    if isinstance(x, (np.generic,)):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist() if x.size <= 16 else _summary(x)
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    return x


def _summary(a: np.ndarray) -> str:
    """A large array in words: numbers by their count and range, outcomes by the count of each value."""
    if a.dtype.kind in "fiu" and a.size:
        finite = a[np.isfinite(a)] if a.dtype.kind == "f" else a
        text = f"{a.size} values in [{format_value(finite.min())}, {format_value(finite.max())}]" if finite.size else f"{a.size} values"
        bad = a.size - finite.size
        return text + (f", {bad} not finite" if bad else "")
    values, counts = np.unique(a.astype(str), return_counts=True)
    return ", ".join(f"{n}× {v}" for v, n in zip(values, counts))


def _rivals(rivals: Mapping[str, Any] | None) -> tuple[tuple[str, Any], ...]:
    if rivals is None:
        return ()
    if not isinstance(rivals, Mapping):
        raise TypeError(f"rivals: expected a mapping {{statement: value}}, got {type(rivals).__name__}")
    out = []
    for label, value in rivals.items():
        if not isinstance(label, str) or not label.strip():
            raise ValueError(f"rivals: each rival needs a statement as its key, got {label!r}")
        out.append((label, value))
    return tuple(out)


def _finite_array(name: str, x: Any) -> np.ndarray:
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected a number or an array of numbers, got {type(x).__name__}") from None
    if a.size == 0:
        raise ValueError(f"{name}: expected at least one value, got an empty array")
    return a


def _number(name: str, x: Any, *, positive: bool = False, nonnegative: bool = False) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name}: expected a real number, got {type(x).__name__}")
    v = float(x)
    if not math.isfinite(v):
        raise ValueError(f"{name}: expected a finite number, got {v}")
    if positive and not v > 0:
        raise ValueError(f"{name}: expected a positive number, got {v}")
    if nonnegative and not v >= 0:
        raise ValueError(f"{name}: expected a number >= 0, got {v}")
    return v


def format_value(x: Any) -> str:
    if isinstance(x, (float, np.floating)):
        x = float(x)
        if x == 0 or (1e-3 <= abs(x) < 1e5):
            return f"{x:.6g}"
        return f"{x:.3e}"
    if isinstance(x, np.ndarray):
        if x.size == 1:
            return format_value(x.reshape(()).item())
        if x.size <= 4:
            return "[" + ", ".join(format_value(v) for v in x.ravel().tolist()) + "]"
        return _summary(x)
    return str(x)


class Check:
    """Base class of the typed comparisons (see the module docstring)."""

    kind: ClassVar[str] = ""
    #: outcomes are booleans or labels: no relative or absolute change of the prediction means anything
    discrete: ClassVar[bool] = False
    quantity: str
    rivals: tuple[tuple[str, Any], ...]
    paper: Any
    why: str
    quote: str
    where: str

    def assess(self, value: Any, label: str = "prediction") -> Assessment:  # pragma: no cover - abstract
        raise NotImplementedError

    # what the report shows in its "predicted", "measured" and "tolerance" columns
    def predicted_value(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def measured_value(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def tolerance_text(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def _validate_common(self) -> None:
        if not isinstance(self.quantity, str) or not self.quantity.strip():
            raise ValueError(f"quantity: say what is compared (with its symbol), got {self.quantity!r}")
        if not isinstance(self.why, str):
            raise TypeError(f"why: expected a string, got {type(self.why).__name__}")
        for name in ("quote", "where"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"{name}: expected a string, got {type(getattr(self, name)).__name__}")
        if self.paper is not None and not (self.quote.strip() and self.where.strip()):
            raise ValueError(f"paper: the paper's value {format_value(self.paper)!s:.40} for {self.quantity!r} needs quote= "
                             "(the paper's verbatim words stating it) and where= (arXiv id and section, theorem, "
                             "equation, figure, table or 'abstract')")

    def candidate(self) -> Any:
        """The predicted value in the form :meth:`assess` takes (the display form may differ)."""
        return self.predicted_value()

    def prediction(self) -> Assessment:
        return self.assess(self.candidate(), "prediction")

    def rival_assessments(self) -> list[Assessment]:
        return [self.assess(value, label) for label, value in self.rivals]

    def paper_assessment(self) -> Assessment | None:
        return None if self.paper is None else self.assess(self.paper, "paper")

    def _numeric_prediction(self) -> np.ndarray | None:
        if self.discrete:
            return None
        try:
            p = np.asarray(self.candidate(), dtype=float)
        except (TypeError, ValueError):
            return None
        return p if p.size and np.all(np.isfinite(p)) else None

    def _smallest_rejected(self, moved) -> float:
        """The least ``d > 0`` for which ``moved(d)`` or ``moved(-d)`` is rejected: a log grid of ``d`` from 1e-12 to
        1e3 (relative) on each side, then bisection to 0.1 % of ``d``; ``inf`` if none is."""
        best = math.inf
        for sign in (1.0, -1.0):
            rejected = lambda d: not self.assess(moved(sign * d)).accepted  # noqa: E731
            lo, hi = 0.0, None
            for d in np.geomspace(1e-12, 1e3, 46):
                if rejected(d):
                    hi = float(d)
                    break
                lo = float(d)
            if hi is None:
                continue
            for _ in range(200):  # bisection (the rule is monotone in d near the prediction); capped, since a
                if hi - lo <= 1e-3 * hi:  # prediction on the very edge of its band is rejected at every d > 0
                    break
                mid = math.sqrt(lo * hi) if lo > 0 else hi / 2
                lo, hi = (lo, mid) if rejected(mid) else (mid, hi)
            best = min(best, hi)
        return best

    def resolution(self) -> float | None:
        r"""The smallest relative change of the prediction that this check's own rule rejects.

        The least :math:`\delta > 0` such that :math:`p(1+\delta)` or :math:`p(1-\delta)` (every element
        scaled together) is rejected by :meth:`assess` on the same measurement (a log grid of :math:`\delta`
        from :math:`10^{-12}` to :math:`10^3` on each side, then bisection to 0.1 %). It is 0 when the
        prediction itself is rejected and ``inf`` when no change up to 1000-fold is; ``None`` where a relative
        change means nothing (discrete outcomes; an all-zero prediction, whose resolution is
        :meth:`absolute_resolution`).
        """
        p = self._numeric_prediction()
        if p is None or not np.any(p != 0):
            return None
        if not self.assess(p).accepted:
            return 0.0
        return self._smallest_rejected(lambda d: p * (1.0 + d))

    def absolute_resolution(self) -> float | None:
        """For an all-zero prediction: the smallest shift ``d`` (added to every element) that the rule rejects."""
        p = self._numeric_prediction()
        if p is None or np.any(p != 0):
            return None
        if not self.assess(p).accepted:
            return 0.0
        return self._smallest_rejected(lambda d: p + d)

    def to_dict(self) -> dict:
        pred = self.prediction()
        paper = self.paper_assessment()
        return {
            "kind": self.kind, "quantity": self.quantity,
            "predicted": _jsonable(self.predicted_value()), "measured": _jsonable(self.measured_value()),
            "tolerance": self.tolerance_text(), "why": self.why,
            "accepted": pred.accepted, "score": _jsonable(pred.score), "margin": pred.text,
            "resolution": _jsonable(self.resolution()), "resolution_abs": _jsonable(self.absolute_resolution()),
            "rivals": [a.to_dict() for a in self.rival_assessments()],
            "paper": paper.to_dict() if paper else None,
            "quote": self.quote, "where": self.where,
        }


@dataclass(frozen=True, eq=False)
class Exact(Check):
    r"""Two-sided: accepted iff :math:`\max_i |m_i - p_i| / (\mathrm{atol} + \mathrm{rtol}\,|p_i|) \le 1`.

    ``predicted`` and ``measured`` are numbers or arrays of one shape (compared elementwise, worst
    element decides). At least one of ``rtol``/``atol`` must be positive.
    """

    quantity: str
    predicted: Any
    measured: Any
    rtol: float = 0.0
    atol: float = 0.0
    rivals: Any = None
    paper: Any = None
    why: str = ""
    quote: str = ""
    where: str = ""
    kind: ClassVar[str] = "exact"

    def __post_init__(self) -> None:
        self._validate_common()
        object.__setattr__(self, "rivals", _rivals(self.rivals))
        rtol = _number("rtol", self.rtol, nonnegative=True)
        atol = _number("atol", self.atol, nonnegative=True)
        if rtol == 0 and atol == 0:
            raise ValueError("rtol/atol: an Exact check needs a positive tolerance (say why in why=)")
        p, m = _finite_array("predicted", self.predicted), _finite_array("measured", self.measured)
        if p.shape != m.shape and p.size != 1:
            raise ValueError(f"predicted/measured: shapes {p.shape} and {m.shape} differ")

    def assess(self, value: Any, label: str = "prediction") -> Assessment:
        p = np.asarray(value, dtype=float)
        m = np.asarray(self.measured, dtype=float)
        tol = self.atol + self.rtol * np.abs(p)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(np.isfinite(m), np.abs(m - p) / tol, np.inf)
        score = float(np.max(ratio)) if ratio.size else 0.0
        if math.isnan(score):
            score = math.inf
        return Assessment(label, value, score <= 1.0, score, f"|Δ| = {format_value(score)} × tolerance")

    def predicted_value(self) -> Any:
        return self.predicted

    def measured_value(self) -> Any:
        return self.measured

    def tolerance_text(self) -> str:
        parts = ([f"rtol {self.rtol:.1e}"] if self.rtol else []) + ([f"atol {self.atol:.1e}"] if self.atol else [])
        return " + ".join(parts)


@dataclass(frozen=True, eq=False)
class Bound(Check):
    r"""One-sided: ``side="<="`` accepts iff :math:`\max_i m_i \le b + s`; ``">="`` iff :math:`\min_i m_i \ge b - s`.

    The prediction is the bound :math:`b`; each rival is another bound (typically a tighter one
    that a reader might believe, or the paper's). ``slack`` :math:`s \ge 0` is the measurement's
    resolution (say why).
    """

    quantity: str
    measured: Any
    bound: float
    side: str = "<="
    slack: float = 0.0
    rivals: Any = None
    paper: Any = None
    why: str = ""
    quote: str = ""
    where: str = ""
    kind: ClassVar[str] = "bound"

    def __post_init__(self) -> None:
        self._validate_common()
        object.__setattr__(self, "rivals", _rivals(self.rivals))
        if self.side not in ("<=", ">="):
            raise ValueError(f"side: expected '<=' or '>=', got {self.side!r}")
        _number("slack", self.slack, nonnegative=True)
        _number("bound", self.bound)
        _finite_array("measured", self.measured)

    def _extreme(self) -> float:
        m = np.asarray(self.measured, dtype=float)
        if not np.all(np.isfinite(m)):
            return math.inf if self.side == "<=" else -math.inf
        return float(m.max() if self.side == "<=" else m.min())

    def assess(self, value: Any, label: str = "prediction") -> Assessment:
        b = float(value)
        worst = self._extreme()
        # violation > 0: the measurement breaks the bound by that much beyond the slack
        violation = (worst - b - self.slack) if self.side == "<=" else (b - self.slack - worst)
        scale = max(abs(b), self.slack, 1e-300)
        score = 1.0 + violation / scale
        text = (f"violated by {format_value(violation)}" if violation > 0 else f"holds with room {format_value(-violation)}")
        return Assessment(label, b, violation <= 0, score, text)

    def candidate(self) -> Any:
        return self.bound

    def predicted_value(self) -> Any:
        return f"{self.side} {format_value(float(self.bound))}"

    def measured_value(self) -> Any:
        return self._extreme()

    def tolerance_text(self) -> str:
        return f"slack {self.slack:.1e}" if self.slack else "one-sided"


def fit_slope(x: Any, y: Any, *, log: bool = True, sigma: Any = None) -> tuple[float, float]:
    r"""Least-squares slope of :math:`\log y` on :math:`\log x` (or of ``y`` on ``x``) and its standard error.

    Ordinary least squares :math:`\hat\beta = S_{xy}/S_{xx}`; the standard error is
    :math:`\sqrt{\hat\sigma^2 / S_{xx}}` with :math:`\hat\sigma^2` the residual variance
    (:math:`n - 2` degrees of freedom). With ``sigma`` (standard errors of ``y``) the fit is
    weighted by :math:`1/\sigma_{\log y}^2`, :math:`\sigma_{\log y} = \sigma/y`, and the SE is
    :math:`\sqrt{1/S_{xx}^{(w)}}` scaled up by the reduced :math:`\chi^2` when that exceeds 1.
    Needs at least three points.
    """
    xs, ys = _finite_array("x", x).ravel(), _finite_array("y", y).ravel()
    if xs.shape != ys.shape:
        raise ValueError(f"x/y: lengths {xs.size} and {ys.size} differ")
    if xs.size < 3:
        raise ValueError(f"x: a slope with a standard error needs at least 3 points, got {xs.size}")
    if log:
        if np.any(xs <= 0) or np.any(ys <= 0):
            raise ValueError("x/y: a log-log slope needs positive values")
        u, v = np.log(xs), np.log(ys)
    else:
        u, v = xs, ys
    if sigma is None:
        w = np.ones_like(u)
    else:
        s = _finite_array("sigma", sigma).ravel()
        if s.shape != ys.shape or np.any(s <= 0):
            raise ValueError("sigma: expected one positive standard error per point")
        w = 1.0 / (s / ys if log else s) ** 2
    ubar, vbar = np.sum(w * u) / np.sum(w), np.sum(w * v) / np.sum(w)
    sxx = np.sum(w * (u - ubar) ** 2)
    if not sxx > 0:
        raise ValueError("x: all abscissae are equal; no slope")
    slope = float(np.sum(w * (u - ubar) * (v - vbar)) / sxx)
    resid = v - vbar - slope * (u - ubar)
    dof = xs.size - 2
    if sigma is None:
        se = math.sqrt(float(np.sum(resid ** 2)) / dof / sxx)
    else:
        chi2 = float(np.sum(w * resid ** 2)) / dof
        se = math.sqrt(max(chi2, 1.0) / sxx)
    return slope, se


@dataclass(frozen=True, eq=False)
class Rate(Check):
    r"""Log-log slope: accepted iff :math:`|\hat\beta - p| \le z\,\mathrm{SE} + \text{next\_order}`.

    ``x``/``y`` are the measured curve; :func:`fit_slope` gives :math:`\hat\beta` and its SE.
    ``next_order`` bounds the bias of the slope from the next term of the expansion over the fitted
    range (say how it was obtained); it is not a free tolerance. ``log=False`` fits a plain slope.
    """

    quantity: str
    x: Any
    y: Any
    predicted: float
    next_order: float = 0.0
    z: float = 4.0
    sigma: Any = None
    log: bool = True
    rivals: Any = None
    paper: Any = None
    why: str = ""
    quote: str = ""
    where: str = ""
    kind: ClassVar[str] = "rate"
    slope: float = field(init=False, default=math.nan)
    se: float = field(init=False, default=math.nan)

    def __post_init__(self) -> None:
        self._validate_common()
        object.__setattr__(self, "rivals", _rivals(self.rivals))
        _number("predicted", self.predicted)
        _number("next_order", self.next_order, nonnegative=True)
        _number("z", self.z, positive=True)
        slope, se = fit_slope(self.x, self.y, log=self.log, sigma=self.sigma)
        object.__setattr__(self, "slope", slope)
        object.__setattr__(self, "se", se)

    @property
    def band(self) -> float:
        return self.z * self.se + self.next_order

    def assess(self, value: Any, label: str = "prediction") -> Assessment:
        d = abs(self.slope - float(value))
        band = self.band
        score = d / band if band > 0 else (0.0 if d == 0 else math.inf)
        return Assessment(label, value, score <= 1.0, score,
                          f"|Δslope| = {format_value(d)} = {format_value(d / self.se) if self.se > 0 else 'inf'} SE ({format_value(score)} × band)")

    def predicted_value(self) -> Any:
        return float(self.predicted)

    def measured_value(self) -> Any:
        return self.slope

    def tolerance_text(self) -> str:
        return f"{self.z:g}·SE ({self.se:.1e}) + {self.next_order:.1e}"


@dataclass(frozen=True, eq=False)
class Statistical(Check):
    r"""Monte Carlo estimate: accepted iff :math:`|\hat m - p| \le z\,\mathrm{SE} + \text{bias}` (elementwise).

    ``se`` is the standard error of ``estimate`` (from the spread of independent replicates; state
    how), ``bias`` a deterministic bound on the estimator's bias (discretisation, finite horizon),
    0 when unbiased. The seed goes in :class:`~paper_checks.Result`.

    ``dof``: the degrees of freedom of ``se`` when it is estimated from few replicates (a fit's residual
    scatter over a handful of runs). The rule is unchanged, but the report then shows the band's real
    two-sided coverage, :math:`P(|t_\nu| \le z)` under Student's :math:`t` (:meth:`coverage`): at
    :math:`\nu = 2` a 4-SE band holds a true prediction 94.3 % of the time, not 99.994 %. ``None`` (the
    default): ``se`` rests on enough replicates for the normal band.
    """

    quantity: str
    estimate: Any
    se: Any
    predicted: Any
    z: float = 4.0
    bias: float = 0.0
    rivals: Any = None
    paper: Any = None
    why: str = ""
    quote: str = ""
    where: str = ""
    dof: Any = None
    kind: ClassVar[str] = "statistical"

    def __post_init__(self) -> None:
        self._validate_common()
        object.__setattr__(self, "rivals", _rivals(self.rivals))
        _number("z", self.z, positive=True)
        if self.dof is not None and _number("dof", self.dof) < 1:
            raise ValueError(f"dof: expected the standard error's degrees of freedom, >= 1 (or None), got {self.dof!r}")
        _number("bias", self.bias, nonnegative=True)
        se = _finite_array("se", self.se)
        if not np.all(np.isfinite(se)) or np.any(se <= 0):
            raise ValueError(f"se: expected positive finite standard errors, got {self.se!r}")
        _finite_array("estimate", self.estimate)
        _finite_array("predicted", self.predicted)

    def assess(self, value: Any, label: str = "prediction") -> Assessment:
        est, se, p = (np.asarray(a, dtype=float) for a in (self.estimate, self.se, value))
        with np.errstate(invalid="ignore"):
            band = self.z * se + self.bias
            ratio = np.where(np.isfinite(est), np.abs(est - p) / band, np.inf)
            zs = np.where(np.isfinite(est), np.abs(est - p) / se, np.inf)
        score = float(np.max(ratio))
        if math.isnan(score):
            score = math.inf
        return Assessment(label, value, score <= 1.0, score, f"{format_value(float(np.max(zs)))} SE ({format_value(score)} × band)")

    def predicted_value(self) -> Any:
        return self.predicted

    def measured_value(self) -> Any:
        return self.estimate

    def coverage(self) -> float:
        r"""Two-sided coverage of the :math:`z`-SE band for a true prediction: :math:`P(|t_\nu| \le z)` with
        :math:`\nu` = ``dof``, or :math:`\mathrm{erf}(z/\sqrt2)` (normal) when ``dof`` is ``None``."""
        if self.dof is None:
            return math.erf(self.z / math.sqrt(2.0))
        from scipy import stats
        return float(1.0 - 2.0 * stats.t.sf(self.z, float(self.dof)))

    def tolerance_text(self) -> str:
        se = np.asarray(self.se, dtype=float)
        few = "" if self.dof is None else f"; {100 * self.coverage():.1f} % coverage at {float(self.dof):g} dof"
        return f"{self.z:g}·SE ({float(se.max()):.1e})" + (f" + bias {self.bias:.1e}" if self.bias else "") + few


def _outcomes(name: str, x: Any, n: int | None = None) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype != bool:
        raise TypeError(f"{name}: expected booleans (one per item), got dtype {a.dtype}")
    if n is not None:
        a = np.broadcast_to(a, (n,)) if a.ndim == 0 else a.ravel()
        if a.size != n:
            raise ValueError(f"{name}: expected {n} outcomes (one per item), got {a.size}")
    return a.ravel()


@dataclass(frozen=True, eq=False)
class Count(Check):
    r"""Per-item outcomes: accepted iff at least ``required`` of the ``n`` items agree with the prediction.

    ``measured`` is a boolean per item (the observed outcome, e.g. "converged"); ``predicted`` is
    the predicted outcome per item (or one boolean for all). Rivals are other per-item
    predictions (e.g. the outcomes a moved threshold would predict). ``required`` defaults to all.
    """

    quantity: str
    measured: Any
    predicted: Any = True
    required: int | None = None
    rivals: Any = None
    paper: Any = None
    why: str = ""
    quote: str = ""
    where: str = ""
    kind: ClassVar[str] = "count"
    discrete: ClassVar[bool] = True  # a count's resolution lives in the thresholds that set its outcomes

    def __post_init__(self) -> None:
        self._validate_common()
        object.__setattr__(self, "rivals", _rivals(self.rivals))
        m = _outcomes("measured", self.measured)
        if m.size == 0:
            raise ValueError("measured: expected at least one item")
        _outcomes("predicted", self.predicted, m.size)
        req = m.size if self.required is None else self.required
        if isinstance(req, bool) or not isinstance(req, (int, np.integer)) or not 1 <= req <= m.size:
            raise ValueError(f"required: expected an integer in 1..{m.size}, got {self.required!r}")
        object.__setattr__(self, "required", int(req))

    @property
    def n(self) -> int:
        return int(np.asarray(self.measured).size)

    def assess(self, value: Any, label: str = "prediction") -> Assessment:
        m = _outcomes("measured", self.measured)
        p = _outcomes(label, value, m.size)
        agree = int(np.sum(m == p))
        ok = agree >= self.required
        score = (self.n - agree + 1) / (self.n - self.required + 1)
        return Assessment(label, f"true for {int(p.sum())} of {p.size} items", ok, score,
                          f"agrees with the measurement on {agree} of {self.n} items (needs {self.required})")

    def candidate(self) -> Any:
        return self.predicted

    def predicted_value(self) -> Any:
        p = _outcomes("predicted", self.predicted, self.n)
        return f"true for {int(p.sum())} of {p.size} items"

    def measured_value(self) -> Any:
        return f"true for {int(np.sum(_outcomes('measured', self.measured)))} of {self.n} items"

    def tolerance_text(self) -> str:
        return f"at least {self.required} of {self.n} items as predicted"



@dataclass(frozen=True, eq=False)
class Categorical(Check):
    """Discrete outcomes (periods, orderings, signs): accepted iff every entry equals the prediction."""

    quantity: str
    measured: Any
    predicted: Any
    rivals: Any = None
    paper: Any = None
    why: str = ""
    quote: str = ""
    where: str = ""
    kind: ClassVar[str] = "categorical"
    discrete: ClassVar[bool] = True

    def __post_init__(self) -> None:
        self._validate_common()
        object.__setattr__(self, "rivals", _rivals(self.rivals))
        m, p = np.asarray(self.measured), np.asarray(self.predicted)
        if m.size == 0:
            raise ValueError("measured: expected at least one outcome")
        if m.dtype.kind == "f":
            raise TypeError("measured: categorical outcomes must be integers, strings or booleans, not floats")
        if p.shape != m.shape and p.size != 1:
            raise ValueError(f"predicted/measured: shapes {p.shape} and {m.shape} differ")

    def assess(self, value: Any, label: str = "prediction") -> Assessment:
        m = np.asarray(self.measured)
        p = np.broadcast_to(np.asarray(value), m.shape)
        wrong = int(np.sum(m != p))
        return Assessment(label, _jsonable(value), wrong == 0, float(wrong + 1) if wrong else 0.0,
                          f"{wrong}/{m.size} outcomes differ")

    def candidate(self) -> Any:
        return self.predicted

    def predicted_value(self) -> Any:
        return _jsonable(np.asarray(self.predicted)) if np.ndim(self.predicted) else self.predicted

    def measured_value(self) -> Any:
        return _jsonable(np.asarray(self.measured)) if np.ndim(self.measured) else self.measured

    def tolerance_text(self) -> str:
        return "equal"



CHECK_KINDS = {cls.kind: cls for cls in (Exact, Bound, Rate, Statistical, Count, Categorical)}


def standard_error(x: Any, axis: int | None = None) -> Any:
    r"""The standard error of a sample mean, :math:`s/\sqrt n` with :math:`s` the sample SD (divisor
    :math:`n - 1`), over ``axis`` (all entries when None): what a check built on independent runs quotes."""
    x = np.asarray(x, dtype=float)
    n = x.size if axis is None else x.shape[axis]
    return x.std(axis=axis, ddof=1) / np.sqrt(n)


def mean_se(x: Any, axis: int | None = None) -> tuple[Any, Any]:
    """The sample mean over ``axis`` and its :func:`standard_error`."""
    x = np.asarray(x, dtype=float)
    return x.mean(axis=axis), standard_error(x, axis)


def ratio_se(num: Any, den: Any, axis: int | None = None) -> tuple[Any, Any]:
    r"""The ratio of two sample means :math:`\bar a/\bar b` from paired runs and its delta-method standard error,
    :math:`\mathrm{SE}(a - R b)/\bar b` with :math:`R = \bar a/\bar b` (the pairing's covariance included)."""
    a, b = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    r = a.mean(axis=axis) / b.mean(axis=axis)
    rb = r * b if axis is None else np.expand_dims(r, axis) * b
    return r, standard_error(a - rb, axis) / b.mean(axis=axis)
