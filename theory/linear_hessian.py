r"""Hessian spectrum of deep linear networks at a balanced global minimum, and the class-proportion law.

Setting (only the paper's abstract was available; every formula here was derived for steplab and
checked against autodiff Hessians): :math:`f_\theta(x) = W_L\cdots W_1 x` with :math:`W_l\in\mathbb R^{d_l\times d_{l-1}}`,
loss :math:`\mathcal L(\theta)=\tfrac1{2n}\lVert W_L\cdots W_1X-Y\rVert_F^2`,
:math:`\Sigma_{xx}=XX^\top/n`, :math:`\Sigma_{yx}=YX^\top/n`, :math:`W=W_L\cdots W_1`,
:math:`A_l=W_L\cdots W_{l+1}`, :math:`B_l=W_{l-1}\cdots W_1` (empty products are identities).

Assumptions: (A1) whitened inputs :math:`\Sigma_{xx}=\alpha I`; (A2) balanced weights
:math:`W_{l+1}^\top W_{l+1}=W_lW_l^\top`; (A3) an exact global minimum without a width bottleneck,
:math:`\min_l d_l\ge r=\operatorname{rank}W^*`; (A4) linear activations, MSE, full batch.

Result: with :math:`W^*=\Sigma_{yx}/\alpha=USV^\top`, singular values :math:`s_1\ge\dots\ge s_r>0`,
the Hessian at a balanced global minimum has the eigenvalues

* :math:`\alpha\kappa_{ij}`, :math:`\kappa_{ij}=\sum_{l=1}^L s_i^{2(L-l)/L}s_j^{2(l-1)/L}
  =\frac{s_i^2-s_j^2}{s_i^{2/L}-s_j^{2/L}}`, one per ordered pair :math:`i,j\le r`;
* :math:`\alpha s_i^{2(L-1)/L}` with multiplicity :math:`d_0-r` (input side) and with
  multiplicity :math:`d_L-r` (output side), for each :math:`i\le r`;
* zero for the remaining :math:`P-r(d_0+d_L-r)` parameters, :math:`P=\sum_l d_ld_{l-1}`
  (for :math:`L=1` that block is :math:`\alpha` instead: :math:`A_1=B_1=I`).

Beyond the balanced whitened minimum (NumPy):

* at *any* global minimum the Hessian is its Gauss--Newton part, whose non-zero spectrum is that of
  a :math:`d_Ld_0\times d_Ld_0` operator built from the weights and :math:`\Sigma_{xx}`
  (:func:`gauss_newton_spectrum`; :func:`balanced_gauss_newton_spectrum` for balanced minima with
  any input covariance);
* along the aligned, balanced path of a two-layer net (the path GD follows from an aligned small
  initialization) the whole spectrum is a closed function of the learned mode strengths
  (:func:`two_layer_aligned_spectrum`).

Sympy functions take symbols and return expressions; the numeric API (:func:`spectrum`,
:func:`class_sharpness`, :func:`class_spectrum`, :func:`critical_step`, ...) uses NumPy and
validates its arguments (errors name the parameter, the value and what is allowed).
"""
from __future__ import annotations

from numbers import Integral

import numpy as np
import sympy as sp

from theory import validate as V

__all__ = [
    # sympy derivations
    "gauss_newton_gap", "balanced_identity_residuals", "kappa_sum", "kappa_closed",
    "kappa_geometric_identity", "spectrum_terms", "rank_formula", "trace_formula", "parameter_count",
    "depth_one_terms", "class_spectrum_terms", "class_sharpness_symbolic", "critical_step_symbolic",
    "origin_hessian_scalar", "origin_spectrum",
    # numeric API
    "spectrum", "class_sharpness", "class_spectrum", "class_singular_values", "critical_step",
    "numeric_rank", "validate_widths", "validate_proportions", "validate_depth",
    "gauss_newton_operator", "gauss_newton_spectrum", "balanced_gauss_newton_spectrum",
    "two_layer_aligned_spectrum", "aligned_mode_step",
    "class_means_sharpness", "class_means_spectrum", "projected_spectrum",
]

L_SYM = sp.Symbol("L", positive=True, integer=True)


def _sym(name: str, x, *, positive: bool = True) -> sp.Expr:
    """A sympy expression for ``x`` (a number or an expression); numbers must be finite reals (> 0 if ``positive``)."""
    if isinstance(x, (bool, np.bool_, str, bytes)) or x is None:
        raise TypeError(f"{name}: expected a number or a sympy expression, got {type(x).__name__} {x!r}")
    try:
        e = sp.sympify(x, strict=True)
    except (sp.SympifyError, TypeError):
        raise TypeError(f"{name}: expected a number or a sympy expression, got {type(x).__name__} {x!r}") from None
    if e.is_number and not (e.is_real and e.is_finite and (e.is_positive or not positive)):
        raise ValueError(f"{name}: expected a finite real number{' > 0' if positive else ''}, got {e}")
    return e


def _sym_seq(name: str, xs) -> tuple:
    if isinstance(xs, (str, bytes)) or not isinstance(xs, (tuple, list)) or not xs:
        raise TypeError(f"{name}: expected a non-empty tuple of numbers or symbols, got {xs!r}")
    return tuple(_sym(f"{name}[{k}]", x) for k, x in enumerate(xs))


# ----------------------------------------------------------------------------------------------
# sympy derivations
# ----------------------------------------------------------------------------------------------

def gauss_newton_gap(depth: int) -> sp.Matrix:
    r"""Hessian minus its Gauss--Newton part at a global minimum, scalar chain of ``depth`` layers.

    For :math:`f=w_L\cdots w_1` and :math:`\mathcal L=\tfrac{\sigma_{xx}}2f^2-\sigma_{yx}f`,
    :math:`\nabla^2\mathcal L=\sigma_{xx}\nabla f\nabla f^\top+(\sigma_{xx}f-\sigma_{yx})\nabla^2f`.
    The second term carries the gradient of the loss with respect to :math:`W` (the normal
    equations' residual), so it vanishes at every global minimum :math:`f=\sigma_{yx}/\sigma_{xx}`
    even when the data residual :math:`Y-WX` is non-zero. Returns the simplified difference
    (the zero matrix) after substituting the minimum for :math:`w_L`.
    """
    depth = validate_depth(depth)
    w = sp.symbols(f"w1:{depth + 1}", nonzero=True)
    sxx, syx = sp.symbols("sigma_xx sigma_yx", positive=True)
    f = sp.Mul(*w)
    loss = sxx / 2 * f**2 - syx * f
    hess = sp.hessian(loss, w)
    grad_f = sp.Matrix([sp.diff(f, v) for v in w])
    gn = sxx * grad_f * grad_f.T
    at_min = {w[-1]: syx / (sxx * sp.Mul(*w[:-1]))}
    return sp.simplify((hess - gn).subs(at_min))


_TRIPLES = ((3, 4, 5), (5, 12, 13), (8, 15, 17), (7, 24, 25), (20, 21, 29), (12, 35, 37), (9, 40, 41), (28, 45, 53))


def _rot(k: int) -> sp.Matrix:
    # exact rational rotations from Pythagorean triples: generic gauges whose products stay polynomial
    a, b, c = _TRIPLES[k % len(_TRIPLES)]
    return sp.Matrix([[sp.Rational(a, c), -sp.Rational(b, c)], [sp.Rational(b, c), sp.Rational(a, c)]])


def balanced_identity_residuals(depth: int, rescale=1) -> list[sp.Matrix]:
    r"""Residuals of the balanced-minimum identities for :math:`2\times2` layers (all zero when ``rescale == 1``).

    With :math:`W^*=R(\psi)\,\mathrm{diag}(s_1,s_2)\,R(\phi)^\top` and hidden rotations
    :math:`R(\theta_l)` (the orthogonal gauge; exact rational rotations from Pythagorean triples), the balanced factorization is
    :math:`W_l=R(\theta_l)\,S^{1/L}R(\theta_{l-1})^\top` with :math:`\theta_0=\phi`,
    :math:`\theta_L=\psi`. It satisfies :math:`W_{l+1}^\top W_{l+1}=W_lW_l^\top`,
    :math:`A_lA_l^\top=(WW^\top)^{(L-l)/L}` and :math:`B_l^\top B_l=(W^\top W)^{(l-1)/L}`
    (the matrix powers taken through the SVD; :math:`s_i=t_i^L`). Returns every residual matrix, simplified.

    ``rescale`` :math:`c\ne1` applies the function-preserving gauge :math:`W_1\to cW_1`,
    :math:`W_2\to W_2/c` (depth :math:`\ge2`): the product is unchanged but the factorization is no
    longer balanced, and the residuals are non-zero -- the identities are a property of balance.
    """
    depth = validate_depth(depth)
    if isinstance(rescale, (bool, np.bool_, sp.logic.boolalg.Boolean)) or not isinstance(
            rescale, (int, float, np.integer, np.floating, sp.Number)):
        raise TypeError(f"rescale: expected a positive real number (int, float or SymPy number), "
                        f"got {type(rescale).__name__} {rescale!r}")
    c = sp.nsimplify(rescale)
    if not (c.is_number and c.is_positive):
        raise ValueError(f"rescale: expected a positive number, got {rescale!r}")
    if depth == 1 and c != 1:
        raise ValueError("rescale: a depth-1 net has no gauge to rescale (need depth >= 2)")
    # write s_i = t_i^L so that S^{1/L} = diag(t) and every power is a monomial: the residuals are
    # rational functions and cancel exactly
    t1, t2 = sp.symbols("t1 t2", positive=True)
    th = list(range(depth + 1))  # rotation indices: theta_0 = phi (V), theta_L = psi (U)
    root = sp.diag(t1, t2)
    W = [_rot(th[l]) * root * _rot(th[l - 1]).T for l in range(1, depth + 1)]  # W[l-1] is W_l
    if depth >= 2:
        W[0], W[1] = c * W[0], W[1] / c

    def prod(ms: list[sp.Matrix]) -> sp.Matrix:
        out = sp.eye(2)
        for m in ms:
            out = out * m
        return out

    def power(rot: sp.Matrix, k: int) -> sp.Matrix:
        # (s^2)^{k/L} = t^{2k}
        return rot * sp.diag(t1 ** (2 * k), t2 ** (2 * k)) * rot.T

    res = []
    for l in range(1, depth):
        res.append(W[l].T * W[l] - W[l - 1] * W[l - 1].T)
    for l in range(1, depth + 1):
        A = prod(W[l:][::-1])           # W_L ... W_{l+1}
        B = prod(W[: l - 1][::-1])      # W_{l-1} ... W_1
        res.append(A * A.T - power(_rot(th[-1]), depth - l))
        res.append(B.T * B - power(_rot(th[0]), l - 1))
    return [r.applyfunc(sp.expand) for r in res]


def kappa_sum(si: sp.Expr, sj: sp.Expr, depth: sp.Expr) -> sp.Expr:
    r""":math:`\kappa_{ij}=\sum_{l=1}^{L}s_i^{2(L-l)/L}s_j^{2(l-1)/L}` (the eigenvalue on :math:`u_iv_j^\top`).

    The Gauss--Newton operator :math:`M\mapsto\sum_l A_lA_l^\top M B_l^\top B_l` is diagonal in
    the basis :math:`u_iv_j^\top` by the balanced identities; this is its eigenvalue.
    """
    si, sj = _sym("si", si), _sym("sj", sj)
    depth = validate_depth(depth) if isinstance(depth, Integral) else _sym("depth", depth)
    l = sp.Symbol("l", positive=True, integer=True)
    term = si ** (2 * (depth - l) / depth) * sj ** (2 * (l - 1) / depth)
    if isinstance(depth, Integral) or (isinstance(depth, sp.Integer)):
        return sp.Add(*[term.subs(l, k) for k in range(1, int(depth) + 1)])
    return sp.Sum(term, (l, 1, depth))


def kappa_closed(si: sp.Expr, sj: sp.Expr, depth: sp.Expr) -> sp.Expr:
    r"""Closed form :math:`\kappa_{ij}=(s_i^2-s_j^2)/(s_i^{2/L}-s_j^{2/L})` for :math:`s_i\ne s_j`."""
    si, sj, depth = _sym("si", si), _sym("sj", sj), _sym("depth", depth)
    return (si**2 - sj**2) / (si ** (2 / sp.sympify(depth)) - sj ** (2 / sp.sympify(depth)))


def kappa_geometric_identity() -> tuple[sp.Expr, sp.Expr]:
    r"""Symbolic in :math:`L`: the geometric sum equals the closed form; equal singular values give :math:`L s^{2(L-1)/L}`.

    With :math:`a=s_i^{2/L}`, :math:`b=s_j^{2/L}`:
    :math:`\sum_{l=1}^{L}a^{L-l}b^{l-1}=\frac{a^L-b^L}{a-b}` (:math:`a\ne b`) and :math:`La^{L-1}`
    (:math:`a=b`). Returns ``(generic_difference, equal_case_difference)``, both simplified (zero).
    """
    a, b = sp.symbols("a b", positive=True)
    l = sp.Symbol("l", positive=True, integer=True)
    # sympy returns a Piecewise (ratio b/a = 1 or not); the last branch is the generic a != b case
    total = sp.piecewise_fold(sp.Sum(a ** (L_SYM - l) * b ** (l - 1), (l, 1, L_SYM)).doit())
    generic = total.args[-1][0] if isinstance(total, sp.Piecewise) else total
    generic_diff = sp.simplify(generic - (a**L_SYM - b**L_SYM) / (a - b))
    equal = sp.Sum(a ** (L_SYM - l) * a ** (l - 1), (l, 1, L_SYM)).doit()
    equal_diff = sp.simplify(equal - L_SYM * a ** (L_SYM - 1))
    return generic_diff, equal_diff


def spectrum_terms(s: tuple, d0: sp.Expr, dL: sp.Expr, depth: sp.Expr, alpha: sp.Expr = 1) -> list[tuple[sp.Expr, sp.Expr]]:
    r"""Distinct-by-construction eigenvalue terms ``(value, multiplicity)`` at a balanced global minimum.

    ``s`` are the non-zero singular values of the minimizer :math:`W^*` (symbols or numbers),
    ``alpha`` the input scale (:math:`\Sigma_{xx}=\alpha I`). Terms: :math:`\alpha\kappa_{ij}`
    (multiplicity 1 each), :math:`\alpha s_i^{2(L-1)/L}` (multiplicity :math:`d_0-r+d_L-r`),
    and 0 (multiplicity :math:`P-r(d_0+d_L-r)`, added by the caller who knows :math:`P`).
    Valid for :math:`L\ge2`; see :func:`depth_one_terms` for :math:`L=1`.
    """
    s = _sym_seq("s", s)
    d0, dL, alpha = _sym("d0", d0), _sym("dL", dL), _sym("alpha", alpha)
    depth = validate_depth(depth) if isinstance(depth, Integral) else _sym("depth", depth)
    if isinstance(depth, int) and depth < 2:
        raise ValueError("depth: spectrum_terms covers depth >= 2; use depth_one_terms for depth 1")
    r = len(s)
    terms = []
    for i in range(r):
        for j in range(r):
            # the i = j term of the sum is L equal summands
            value = sp.sympify(depth) * s[i] ** (2 * (depth - 1) / sp.sympify(depth)) if i == j \
                else kappa_sum(s[i], s[j], depth)
            terms.append((alpha * value, sp.Integer(1)))
    for i in range(r):
        terms.append((alpha * s[i] ** (2 * (depth - 1) / sp.sympify(depth)), (d0 - r) + (dL - r)))
    return terms


def rank_formula(r: sp.Expr, d0: sp.Expr, dL: sp.Expr) -> sp.Expr:
    r"""Rank of the Hessian at a global minimum for :math:`L\ge2`: :math:`r(d_0+d_L-r)`."""
    r, d0, dL = _sym("r", r, positive=False), _sym("d0", d0), _sym("dL", dL)
    return r * (d0 + dL - r)


def parameter_count(widths: tuple) -> sp.Expr:
    r""":math:`P=\sum_{l=1}^{L}d_ld_{l-1}`."""
    widths = _sym_seq("widths", widths)
    if len(widths) < 2:
        raise ValueError(f"widths: need at least (d_0, d_L), got {widths}")
    return sp.Add(*[widths[l] * widths[l - 1] for l in range(1, len(widths))])


def trace_formula(s: tuple, d0: sp.Expr, dL: sp.Expr, depth: int, alpha: sp.Expr = 1) -> sp.Expr:
    r"""Trace :math:`\alpha\sum_{l=1}^{L}\operatorname{tr}(A_l^\top A_l)\operatorname{tr}(B_lB_l^\top)`.

    :math:`\operatorname{tr}(A_lA_l^\top)=\sum_i s_i^{2(L-l)/L}` for :math:`l<L` and :math:`d_L`
    for :math:`l=L` (:math:`A_L=I`); :math:`\operatorname{tr}(B_l^\top B_l)=\sum_j s_j^{2(l-1)/L}`
    for :math:`l>1` and :math:`d_0` for :math:`l=1`. Integer ``depth`` (a finite sum of layers).
    """
    depth = validate_depth(depth)
    s = _sym_seq("s", s)
    d0, dL, alpha = _sym("d0", d0), _sym("dL", dL), _sym("alpha", alpha)
    total = 0
    for l in range(1, depth + 1):
        ta = dL if l == depth else sp.Add(*[x ** sp.Rational(2 * (depth - l), depth) for x in s])
        tb = d0 if l == 1 else sp.Add(*[x ** sp.Rational(2 * (l - 1), depth) for x in s])
        total += ta * tb
    return alpha * total


def depth_one_terms(d0: sp.Expr, dL: sp.Expr, alpha: sp.Expr = 1) -> list[tuple[sp.Expr, sp.Expr]]:
    r""":math:`L=1`: :math:`H=\Sigma_{xx}\otimes I_{d_L}`, so every eigenvalue is :math:`\alpha` (multiplicity :math:`d_0d_L`), label-independent."""
    d0, dL, alpha = _sym("d0", d0), _sym("dL", dL), _sym("alpha", alpha)
    return [(alpha, d0 * dL)]


def class_spectrum_terms(K: int, d0: sp.Expr, depth: sp.Expr) -> dict[str, list[tuple[sp.Expr, sp.Expr]]]:
    r"""One-hot labels (K classes, proportions :math:`\pi_k`), whitened inputs: :math:`s_k=\sqrt{\pi_k}`.

    Returns the outliers and bulk: ``class`` :math:`L\pi_k^{(L-1)/L}` (one each), ``cross``
    :math:`(\pi_k-\pi_m)/(\pi_k^{1/L}-\pi_m^{1/L})` (one per ordered pair :math:`k\ne m`),
    ``bulk`` :math:`\pi_k^{(L-1)/L}` (multiplicity :math:`d_0-K`; the output side has
    :math:`d_L-K=0`), each obtained by substituting :math:`s_k=\sqrt{\pi_k}` into
    :func:`spectrum_terms` and simplifying.
    """
    K = V.integer("K", K, low=1)
    d0 = _sym("d0", d0)
    pis = sp.symbols(f"pi1:{K + 1}", positive=True)
    s = tuple(sp.sqrt(p) for p in pis)
    terms = spectrum_terms(s, d0, K, depth)
    out = {"class": [], "cross": [], "bulk": []}
    for idx, (value, mult) in enumerate(terms[: K * K]):
        i, j = divmod(idx, K)
        if i == j:
            out["class"].append((sp.powsimp(sp.simplify(value), force=True), mult))
        else:
            closed = kappa_closed(pis[i] ** sp.Rational(1, 2), pis[j] ** sp.Rational(1, 2), depth)
            out["cross"].append((sp.simplify(closed), mult))
    for value, mult in terms[K * K:]:
        out["bulk"].append((sp.powsimp(sp.simplify(value), force=True), sp.simplify(mult)))
    return out


def class_sharpness_symbolic(depth: sp.Expr = L_SYM, alpha: sp.Expr = 1) -> sp.Expr:
    r""":math:`\lambda_{\max}=L\alpha^{1/L}\pi_{\max}^{1-1/L}` (singular values of :math:`\Sigma_{yx}` are :math:`\sqrt{\alpha\pi_k}`).

    Derivation: :math:`\lambda_{\max}=\alpha\kappa_{11}=\alpha L s_1^{2(L-1)/L}` with
    :math:`s_1=\sqrt{\alpha\pi_{\max}}/\alpha` the top singular value of :math:`W^*=\Sigma_{yx}/\alpha`.
    """
    p = sp.Symbol("pi_max", positive=True)
    depth, alpha = _sym("depth", depth), _sym("alpha", alpha)   # exact rational exponents for integer depth
    s1 = sp.sqrt(alpha * p) / alpha
    return sp.powsimp(sp.simplify(alpha * depth * s1 ** (2 * (depth - 1) / depth)), force=True)


def critical_step_symbolic(depth: sp.Expr = L_SYM, alpha: sp.Expr = 1) -> sp.Expr:
    r""":math:`\eta_c=2/\lambda_{\max}`: balanced minima are the flattest, so no global minimum is linearly stable for GD above it."""
    return 2 / class_sharpness_symbolic(depth, alpha)


def origin_hessian_scalar() -> sp.Matrix:
    r"""Hessian at :math:`\theta=0` of the two-layer scalar chain: :math:`\begin{pmatrix}0&-\sigma_{yx}\\-\sigma_{yx}&0\end{pmatrix}`, eigenvalues :math:`\pm\sigma_{yx}`.

    For matrices, :math:`\nabla^2\mathcal L(0)[\delta,\delta]=-2\operatorname{tr}(\Sigma_{yx}^\top\delta W_2\delta W_1)`;
    in the SVD basis of :math:`\Sigma_{yx}` it splits into :math:`2\times2` blocks of this form, one per
    singular value and hidden unit, hence eigenvalues :math:`\pm\sigma_k` with multiplicity :math:`d_1`.
    """
    w1, w2 = sp.symbols("w1 w2", real=True)
    sxx, syx = sp.symbols("sigma_xx sigma_yx", positive=True)
    loss = sxx / 2 * (w2 * w1) ** 2 - syx * w2 * w1
    return sp.hessian(loss, (w1, w2)).subs({w1: 0, w2: 0})


# ----------------------------------------------------------------------------------------------
# numeric API
# ----------------------------------------------------------------------------------------------

def validate_depth(depth) -> int:
    """``depth`` must be an integer :math:`L\\ge1` (the number of weight matrices)."""
    return V.integer("depth", depth, low=1)


def validate_widths(widths) -> tuple[int, ...]:
    """``widths`` = :math:`(d_0,\\dots,d_L)`: at least two integers :math:`\\ge1`."""
    return V.layer_widths("widths", widths, at_least=2, form="(d_0, ..., d_L) with depth L >= 1")


def validate_proportions(proportions, *, atol: float = 1e-9) -> np.ndarray:
    """Class proportions: a 1-D array of finite numbers :math:`\\ge0` summing to 1 (within ``atol``)."""
    p = V.array("proportions", proportions, ndim=1, low=0.0)
    atol = V.real("atol", atol, low=0.0)
    if not abs(p.sum() - 1.0) <= atol:
        raise ValueError(f"proportions: class proportions must sum to 1 (one-hot labels, every sample in one class), "
                         f"got sum {p.sum():.12g}")
    return p


def _alpha(name: str, x) -> float:
    return V.real(name, x, low=0.0, low_open=True)


def _kappa_numeric(si: np.ndarray, sj: np.ndarray, depth: int) -> np.ndarray:
    # the sum form has no 0/0 at s_i = s_j, unlike the closed form
    l = np.arange(1, depth + 1)
    return np.sum(si[..., None] ** (2 * (depth - l) / depth) * sj[..., None] ** (2 * (l - 1) / depth), axis=-1)


def spectrum(widths, sigma_xx_scale, singular_values, *, max_bytes=None) -> np.ndarray:
    r"""All :math:`P` Hessian eigenvalues (ascending, multiplicities expanded) at a balanced global minimum.

    ``widths`` = :math:`(d_0,\dots,d_L)`; ``sigma_xx_scale`` = :math:`\alpha>0` with
    :math:`\Sigma_{xx}=\alpha I` (A1); ``singular_values`` = the singular values of
    :math:`\Sigma_{yx}` (zeros allowed; at most :math:`\min(d_0,d_L)` of them). The minimizer
    is :math:`W^*=\Sigma_{yx}/\alpha` with singular values :math:`s=\sigma/\alpha`; the eigenvalues
    are :math:`\alpha\kappa_{ij}(s)`, :math:`\alpha s_i^{2(L-1)/L}` (multiplicity
    :math:`d_0+d_L-2r`) and zeros (:math:`L=1`: all equal :math:`\alpha`).

    Raises ``ValueError`` if a hidden width is below :math:`r=\operatorname{rank}\Sigma_{yx}`
    (assumption A3 fails: no exact global minimum, the formula does not apply).
    ``max_bytes``: the allocation limit for the :math:`P` eigenvalues (:func:`theory.validate.byte_limit`).
    """
    widths = validate_widths(widths)
    _spectrum_bytes(widths, max_bytes)
    alpha = _alpha("sigma_xx_scale", sigma_xx_scale)
    sv = V.array("singular_values", singular_values, ndim=1, low=0.0, nonempty=False)
    d0, dL, depth = widths[0], widths[-1], len(widths) - 1
    if sv.size > min(d0, dL):
        raise ValueError(f"singular_values: Sigma_yx is {dL}x{d0}, so at most {min(d0, dL)} singular values, got {sv.size}")
    P = sum(widths[l] * widths[l - 1] for l in range(1, depth + 1))
    if depth == 1:
        return np.full(P, alpha)
    s = np.sort(sv[sv > 0])[::-1] / alpha
    r = s.size
    hidden = widths[1:-1]
    if min(hidden) < r:
        raise ValueError(f"widths: hidden width {min(hidden)} < rank r = {r} of Sigma_yx: a width bottleneck, "
                         f"the product cannot reach the global minimum (assumption A3 fails), so the formula does not apply")
    kappa = _kappa_numeric(s[:, None] * np.ones(r), np.ones(r)[:, None] * s, depth).ravel()
    bulk = np.repeat(s ** (2 * (depth - 1) / depth), (d0 - r) + (dL - r))
    zeros = np.zeros(P - r * (d0 + dL - r))
    return np.sort(np.concatenate([alpha * kappa, alpha * bulk, zeros]))


def _spectrum_bytes(widths: tuple, max_bytes) -> None:
    r"""Refuse a spectrum of :math:`P` eigenvalues (with its pieces and the sort's copy) above the allocation limit
    (:func:`theory.validate.byte_limit`): wide hidden layers make :math:`P = \sum_l d_ld_{l-1}` large."""
    P = sum(a * b for a, b in zip(widths[:-1], widths[1:]))
    V.check_bytes({"widths": widths}, 4 * 8 * P, what="the P eigenvalues, their pieces and the sorted copy",
                  max_bytes=max_bytes)


def numeric_rank(eigenvalues, rtol: float = 1e-8) -> int:
    """Number of eigenvalues above ``rtol`` times the largest modulus (rescaling symmetries give exact zeros)."""
    ev = V.array("eigenvalues", eigenvalues, ndim=1, nonempty=False)
    rtol = V.real("rtol", rtol, low=0.0, low_open=True, high=1.0, high_open=True)
    scale = np.max(np.abs(ev)) if ev.size else 0.0
    return int(np.sum(np.abs(ev) > rtol * scale)) if scale > 0 else 0


def origin_spectrum(widths, singular_values, *, max_bytes=None) -> np.ndarray:
    r"""All Hessian eigenvalues at :math:`\theta=0` (ascending), for any :math:`\Sigma_{xx}`.

    :math:`L=2`: :math:`\pm\sigma_k` (singular values of :math:`\Sigma_{yx}`), each with
    multiplicity :math:`d_1`, and zeros (:func:`origin_hessian_scalar`). :math:`L\ge3`: the loss is
    flat to second order at the origin (every term has at least three weight factors), all zero.
    :math:`L=1` is quadratic, with eigenvalues those of :math:`\Sigma_{xx}`: not covered here.
    ``max_bytes``: the allocation limit for the :math:`P` eigenvalues (:func:`theory.validate.byte_limit`).
    """
    widths = validate_widths(widths)
    _spectrum_bytes(widths, max_bytes)
    depth = len(widths) - 1
    if depth == 1:
        raise ValueError("widths: depth 1 has Hessian Sigma_xx (x) I everywhere; origin_spectrum covers depth >= 2")
    sv = V.array("singular_values", singular_values, ndim=1, low=0.0, nonempty=False)
    if sv.size > min(widths[0], widths[-1]):
        raise ValueError(f"singular_values: Sigma_yx is {widths[-1]}x{widths[0]}, so at most "
                         f"{min(widths[0], widths[-1])} singular values, got {sv.size}")
    P = sum(widths[l] * widths[l - 1] for l in range(1, depth + 1))
    if depth > 2:
        return np.zeros(P)
    s = sv[sv > 0]
    pm = np.repeat(np.concatenate([s, -s]), widths[1])
    return np.sort(np.concatenate([pm, np.zeros(P - pm.size)]))


def class_singular_values(proportions) -> np.ndarray:
    r"""Singular values :math:`\sqrt{\pi_k}` of :math:`\Sigma_{yx}` for one-hot labels fit exactly by whitened inputs."""
    return np.sqrt(validate_proportions(proportions))


def class_sharpness(proportions, depth, sigma_xx_scale: float = 1.0) -> float:
    r""":math:`\lambda_{\max}=L\,\alpha^{1/L}\pi_{\max}^{1-1/L}` for one-hot labels (MSE, whitened, balanced, exact fit).

    Raises ``ValueError`` if the proportions do not sum to 1, ``depth < 1`` or :math:`\alpha\le0`.
    """
    p = validate_proportions(proportions)
    depth = validate_depth(depth)
    alpha = _alpha("sigma_xx_scale", sigma_xx_scale)
    return float(depth * alpha ** (1 / depth) * p.max() ** (1 - 1 / depth))


def critical_step(proportions, depth, sigma_xx_scale: float = 1.0) -> float:
    r""":math:`\eta_c=2/\lambda_{\max}`: the largest GD step at which a global minimum can be linearly stable.

    Balanced minima are the flattest points of their gauge orbit, so every global minimum has
    :math:`\lambda_{\max}\ge L\alpha^{1/L}\pi_{\max}^{1-1/L}`; GD cannot settle at a minimum whose
    sharpness exceeds :math:`2/\eta`.
    """
    return 2.0 / class_sharpness(proportions, depth, sigma_xx_scale)


def class_means_sharpness(proportions, depth, radius) -> float:
    r""":math:`\lambda_{\max}=L\,r^{2/L}\max_cp_c` for inputs at orthogonal class means of norm :math:`r` (not whitened).

    Setting: sample :math:`i` of class :math:`c` is :math:`x_i=r\,o_c` with orthonormal :math:`o_c`,
    one-hot labels, :math:`d_L=K`, no hidden width below :math:`K`. Then
    :math:`\Sigma_{xx}=r^2\sum_cp_co_co_c^\top`, the minimum-norm minimizer is :math:`W^*=O^\top/r`
    (all singular values :math:`1/r`), and its balanced factorization has
    :math:`A_lA_l^\top=r^{-2(L-l)/L}I_K` and :math:`B_l^\top B_l=r^{-2(l-1)/L}OO^\top` (:math:`B_1=I`).
    Since :math:`\Sigma_{xx}` lives on the span of :math:`O`, every term of the Gauss--Newton
    operator :math:`\sum_lA_lA_l^\top\otimes\Sigma_{xx}^{1/2}B_l^\top B_l\Sigma_{xx}^{1/2}` equals
    :math:`r^{-2(L-1)/L}I_K\otimes\Sigma_{xx}`, so the non-zero eigenvalues are
    :math:`Lr^{-2(L-1)/L}\cdot r^2p_c=Lr^{2/L}p_c`, each :math:`K` times
    (:func:`class_means_spectrum`). Unlike the whitened law the proportion enters linearly.
    """
    p = validate_proportions(proportions)
    depth = validate_depth(depth)
    r = V.real("radius", radius, low=0.0, low_open=True)
    return float(depth * r ** (2 / depth) * p.max())


def class_means_spectrum(proportions, widths, radius, *, max_bytes=None) -> np.ndarray:
    r"""All eigenvalues (ascending) at the balanced minimum-norm minimum of orthogonal-class-mean data (see :func:`class_means_sharpness`).

    :math:`Lr^{2/L}p_c` with multiplicity :math:`K=d_L` for each class, zeros for the other
    :math:`P-K^2` parameters. Needs ``widths[-1] == K``, :math:`d_0\ge K` and hidden widths :math:`\ge K`.
    ``max_bytes``: the allocation limit for the :math:`P` eigenvalues (:func:`theory.validate.byte_limit`).
    """
    p = validate_proportions(proportions)
    widths = validate_widths(widths)
    _spectrum_bytes(widths, max_bytes)
    r = V.real("radius", radius, low=0.0, low_open=True)
    K, depth = p.size, len(widths) - 1
    if widths[-1] != K or widths[0] < K or min(widths[1:-1], default=K) < K:
        raise ValueError(f"widths: orthogonal class means need d_L = K = {K}, d_0 >= K and no hidden width below K, "
                         f"got {widths}")
    P = sum(widths[l] * widths[l - 1] for l in range(1, depth + 1))
    top = np.repeat(depth * r ** (2 / depth) * p, K)
    return np.sort(np.concatenate([top, np.zeros(P - top.size)]))


def projected_spectrum(widths, sigma_xx_scale, singular_values, input_rank, *, max_bytes=None) -> np.ndarray:
    r"""All eigenvalues (ascending) at the balanced minimum-norm minimum when :math:`\Sigma_{xx}=\alpha P`, :math:`\operatorname{rank}P=m<d_0`.

    (A1) with a projection: the inputs are whitened on an :math:`m`-dimensional subspace only. The
    minimum-norm minimizer :math:`W^*=\Sigma_{yx}\Sigma_{xx}^+` has its right singular vectors in
    the range of :math:`P`, so :math:`B_l^\top B_l` (:math:`l\ge2`) lives there too, and
    :math:`\Sigma_{xx}^{1/2}B_1^\top B_1\Sigma_{xx}^{1/2}=\alpha P` replaces :math:`\alpha I_{d_0}`:
    the Gauss--Newton operator is the whitened one on :math:`\mathbb R^{d_L}\otimes\operatorname{range}P`
    and zero on the rest. Hence the spectrum of :func:`spectrum` with :math:`d_0` replaced by
    :math:`m` in the input-side bulk (multiplicity :math:`m-r` instead of :math:`d_0-r`) and the
    difference moved to the zeros: rank :math:`r(m+d_L-r)`. For :math:`L=1`:
    :math:`\alpha` with multiplicity :math:`md_L`, zeros otherwise.
    ``max_bytes``: the allocation limit for the :math:`P` eigenvalues (:func:`theory.validate.byte_limit`).
    """
    widths = validate_widths(widths)
    _spectrum_bytes(widths, max_bytes)
    d0 = widths[0]
    m = V.integer("input_rank", input_rank, low=1, high=d0)
    alpha = _alpha("sigma_xx_scale", sigma_xx_scale)
    sv = V.array("singular_values", singular_values, ndim=1, low=0.0, nonempty=False)
    if sv.size > min(m, widths[-1]) and np.sum(sv > 0) > min(m, widths[-1]):
        raise ValueError(f"singular_values: Sigma_yx has rank at most min(input_rank, d_L) = {min(m, widths[-1])}, "
                         f"got {int(np.sum(sv > 0))} non-zero values")
    P = sum(widths[l] * widths[l - 1] for l in range(1, len(widths)))
    small = (m,) + widths[1:]
    sv = np.sort(sv[sv > 0])[::-1]
    inner = spectrum(small, alpha, sv)
    return np.sort(np.concatenate([inner, np.zeros(P - inner.size)]))


def class_spectrum(proportions, widths, *, max_bytes=None) -> np.ndarray:
    r"""All eigenvalues for one-hot labels with ``widths[-1] == K`` classes and whitened inputs (:math:`\alpha=1`).

    Needs :math:`d_0\ge K` (the labels lie in the row space of :math:`X`, so the fit is exact) and
    hidden widths :math:`\ge K` (no bottleneck); otherwise ``ValueError`` naming the assumption.
    ``max_bytes``: the allocation limit for the :math:`P` eigenvalues (:func:`theory.validate.byte_limit`).
    """
    p = validate_proportions(proportions)
    widths = validate_widths(widths)
    _spectrum_bytes(widths, max_bytes)
    K = p.size
    if widths[-1] != K:
        raise ValueError(f"widths: the output width d_L = {widths[-1]} must equal the number of classes K = {K}")
    if widths[0] < K:
        raise ValueError(f"widths: input width d_0 = {widths[0]} < K = {K} classes: one-hot labels cannot be fit "
                         f"exactly by whitened inputs (assumption A3 fails)")
    return spectrum(widths, 1.0, np.sqrt(p))


# ----------------------------------------------------------------------------------------------
# beyond whitened balanced minima: the Gauss-Newton operator
# ----------------------------------------------------------------------------------------------

def _matrices(name: str, mats) -> list[np.ndarray]:
    if isinstance(mats, np.ndarray) or not isinstance(mats, (list, tuple)) or not mats:
        raise TypeError(f"{name}: expected a non-empty list of weight matrices [W_1, ..., W_L], got {type(mats).__name__}")
    out = [V.array(f"{name}[{l}]", m, ndim=2) for l, m in enumerate(mats)]
    for l in range(1, len(out)):
        if out[l].shape[1] != out[l - 1].shape[0]:
            raise ValueError(f"{name}[{l}]: shape {out[l].shape} does not chain with {name}[{l - 1}] of shape "
                             f"{out[l - 1].shape} (W_{l + 1} must have d_{l} = {out[l - 1].shape[0]} columns)")
    return out


def _sqrt_psd(name: str, S) -> np.ndarray:
    S = V.array(name, S, ndim=2)
    if S.shape[0] != S.shape[1] or not np.allclose(S, S.T, rtol=1e-10, atol=1e-12 * max(np.abs(S).max(), 1e-300)):
        raise ValueError(f"{name}: expected a symmetric square matrix (an input covariance), got shape {S.shape}")
    w, Q = np.linalg.eigh(0.5 * (S + S.T))
    if not w.min() >= -1e-10 * max(w.max(), 1e-300):
        raise ValueError(f"{name}: expected a positive semi-definite matrix, got smallest eigenvalue {w.min():.3g}")
    return (Q * np.sqrt(np.clip(w, 0.0, None))) @ Q.T


def gauss_newton_operator(mats, sigma_xx, *, max_bytes=None) -> np.ndarray:
    r"""The :math:`d_Ld_0\times d_Ld_0` operator whose spectrum is the non-zero Hessian spectrum at a global minimum.

    With :math:`A_l=W_L\cdots W_{l+1}` and :math:`B_l=W_{l-1}\cdots W_1`, the Jacobian
    :math:`J:\delta\theta\mapsto\delta W=\sum_lA_l\,\delta W_l\,B_l` gives the Gauss--Newton part
    :math:`G=J^\top(\Sigma_{xx}\otimes I)J` of the Hessian, which is the whole Hessian at any
    global minimum (:func:`gauss_newton_gap`). The non-zero eigenvalues of :math:`J^\top SJ`
    are those of :math:`S^{1/2}JJ^\top S^{1/2}`, and :math:`JJ^\top M=\sum_lA_lA_l^\top MB_l^\top B_l`,
    so they are the eigenvalues of

    .. math:: K=\sum_{l=1}^{L}(A_lA_l^\top)\otimes(\Sigma_{xx}^{1/2}B_l^\top B_l\Sigma_{xx}^{1/2})

    acting on row-major :math:`\operatorname{vec}M`, :math:`M\in\mathbb R^{d_L\times d_0}`. Valid for
    any weights (balanced or not) and any :math:`\Sigma_{xx}`; it is the Hessian only where the
    normal equations hold.
    ``max_bytes``: the allocation limit (:func:`theory.validate.byte_limit`) for :math:`K` (and a Kronecker term and
    the symmetrized copy, all :math:`d_Ld_0\times d_Ld_0`).
    """
    mats = _matrices("mats", mats)
    n = mats[0].shape[1] * mats[-1].shape[0]
    V.check_bytes({"mats": f"d_L d_0 = {n}"}, 4 * 8 * n * n, what="the (d_L d_0)^2 operator, a Kronecker term and copies",
                  max_bytes=max_bytes)
    root = _sqrt_psd("sigma_xx", sigma_xx)
    d0, dL = mats[0].shape[1], mats[-1].shape[0]
    if root.shape[0] != d0:
        raise ValueError(f"sigma_xx: expected a {d0}x{d0} input covariance (W_1 has {d0} columns), got {root.shape}")
    K = np.zeros((dL * d0, dL * d0))
    for l in range(len(mats)):
        A = _chain(mats[l + 1:], mats[l].shape[0])
        B = _chain(mats[:l], d0)
        K += np.kron(A @ A.T, root @ B.T @ B @ root)
    return 0.5 * (K + K.T)


def _chain(mats: list[np.ndarray], dim: int) -> np.ndarray:
    # W_k ... W_j for mats = [W_j, ..., W_k]; the identity of size dim when empty
    out = np.eye(dim)
    for W in mats:
        out = W @ out
    return out


def gauss_newton_spectrum(mats, sigma_xx, *, max_bytes=None) -> np.ndarray:
    """Eigenvalues (ascending, :math:`d_Ld_0` of them) of :func:`gauss_newton_operator`."""
    return np.linalg.eigvalsh(gauss_newton_operator(mats, sigma_xx, max_bytes=max_bytes))


def balanced_gauss_newton_spectrum(sigma_xx, sigma_yx, depth) -> np.ndarray:
    r"""The non-zero Hessian spectrum at a balanced global minimum for *any* invertible input covariance.

    :math:`W^*=\Sigma_{yx}\Sigma_{xx}^{-1}=USV^\top`; at a balanced factorization
    :math:`A_lA_l^\top=(W^*W^{*\top})^{(L-l)/L}=US^{2(L-l)/L}U^\top` and
    :math:`B_l^\top B_l=(W^{*\top}W^*)^{(l-1)/L}=VS^{2(l-1)/L}V^\top` (powers on the non-zero
    singular values; :math:`A_L=I`, :math:`B_1=I`), so the operator of
    :func:`gauss_newton_operator` is a closed function of :math:`\Sigma_{xx}`, :math:`\Sigma_{yx}`
    and :math:`L`. With :math:`\Sigma_{xx}=\alpha I` its eigenvalues are the :math:`\alpha\kappa_{ij}`
    and bulk terms of :func:`spectrum`; otherwise they mix the singular directions of :math:`W^*`
    with the eigenvectors of :math:`\Sigma_{xx}` and the class law no longer holds. Returns the
    :math:`d_Ld_0` eigenvalues, ascending (assumes no width bottleneck, A3).
    """
    depth = validate_depth(depth)
    Sxx = V.array("sigma_xx", sigma_xx, ndim=2)
    Syx = V.array("sigma_yx", sigma_yx, ndim=2)
    d0 = Sxx.shape[0]
    if Syx.shape[1] != d0:
        raise ValueError(f"sigma_yx: expected {d0} columns to match sigma_xx {Sxx.shape}, got shape {Syx.shape}")
    root = _sqrt_psd("sigma_xx", Sxx)
    if not np.linalg.eigvalsh(0.5 * (Sxx + Sxx.T)).min() > 0:
        raise ValueError("sigma_xx: expected an invertible (positive definite) covariance so that W* is unique")
    W = np.linalg.solve(Sxx.T, Syx.T).T
    U, s, Vt = np.linalg.svd(W, full_matrices=False)
    keep = s > 1e-12 * max(s[0], 1e-300)
    U, s, Vt = U[:, keep], s[keep], Vt[keep]
    dL = W.shape[0]
    K = np.zeros((dL * d0, dL * d0))
    for l in range(1, depth + 1):
        AA = np.eye(dL) if l == depth else (U * s ** (2 * (depth - l) / depth)) @ U.T
        BB = np.eye(d0) if l == 1 else (Vt.T * s ** (2 * (l - 1) / depth)) @ Vt
        K += np.kron(AA, root @ BB @ root)
    return np.linalg.eigvalsh(0.5 * (K + K.T))


# ----------------------------------------------------------------------------------------------
# two-layer nets along the aligned, balanced path
# ----------------------------------------------------------------------------------------------

def two_layer_aligned_spectrum(widths, singular_values, strengths, *, max_bytes=None) -> np.ndarray:
    r"""All Hessian eigenvalues of a two-layer net at an aligned, balanced point, whitened inputs (:math:`\Sigma_{xx}=I`).

    Setting: :math:`\Sigma_{yx}=\sum_{k\le r}s_ku_kv_k^\top` and the weights
    :math:`W_1=\sum_k\sqrt{a_k}\,e_kv_k^\top`, :math:`W_2=\sum_k\sqrt{a_k}\,u_ke_k^\top` (orthonormal
    hidden :math:`e_k`), so :math:`W=\sum_ka_ku_kv_k^\top` with *mode strengths* :math:`a_k\ge0`;
    :math:`a=0` is the origin and :math:`a=s` the balanced global minimum. The second-order term
    of the loss is :math:`\lVert W_2\delta W_1+\delta W_2W_1\rVert_F^2+2\langle R,\delta W_2\delta W_1\rangle`
    with residual :math:`R=W-\Sigma_{yx}` (diagonal, :math:`R_k=a_k-s_k`), and it splits into blocks:

    * for each :math:`k`: :math:`\begin{pmatrix}a_k&2a_k-s_k\\2a_k-s_k&a_k\end{pmatrix}`, eigenvalues
      :math:`3a_k-s_k` and :math:`s_k-a_k`;
    * for each pair :math:`i<j`: on :math:`(\delta W_1[i,j],\delta W_2[i,j],\delta W_1[j,i],\delta W_2[j,i])`
      the :math:`4\times4` matrix with diagonal :math:`(a_i,a_j,a_j,a_i)`, Gauss--Newton couplings
      :math:`\sqrt{a_ia_j}` within each pair and residual couplings :math:`R_i`, :math:`R_j` across
      (eigenvalues :math:`a_i+a_j` twice and 0 twice at the minimum);
    * :math:`\pm(s_k-a_k)` for each of the :math:`d_1-r` unused hidden units;
    * :math:`a_k` with multiplicity :math:`d_0-r` (input side) and :math:`d_L-r` (output side);
    * zeros for the rest.

    At :math:`a=s` this is the :math:`L=2` case of :func:`spectrum`, at :math:`a=0` that of
    :func:`origin_spectrum`. GD from an aligned, balanced start stays on this path (the gradient is
    diagonal in the same bases and symmetric in the two factors), with
    :math:`\sqrt{a_k}\leftarrow\sqrt{a_k}(1-\eta(a_k-s_k))` (:func:`aligned_mode_step`).

    ``strengths`` has shape ``(r,)`` or ``(T, r)`` (a path); returns ``(P,)`` or ``(T, P)``, ascending.
    ``max_bytes``: the allocation limit for the :math:`P` eigenvalues (:func:`theory.validate.byte_limit`).
    """
    widths = validate_widths(widths)
    _spectrum_bytes(widths, max_bytes)
    if len(widths) != 3:
        raise ValueError(f"widths: expected a two-layer net (d_0, d_1, d_2), got {widths}")
    d0, d1, dL = widths
    s = V.array("singular_values", singular_values, ndim=1, low=0.0, low_open=True)
    a = V.array("strengths", strengths, ndim=(1, 2), low=0.0)
    r = s.size
    if a.shape[-1] != r:
        raise ValueError(f"strengths: expected {r} mode strengths (one per singular value), got shape {a.shape}")
    if r > min(widths):
        raise ValueError(f"singular_values: {r} modes do not fit widths {widths} (at most {min(widths)})")
    path = a.reshape(-1, r)
    R = path - s
    blocks = [3 * path - s, s - path]
    blocks += [np.repeat(s - path, d1 - r, axis=1), np.repeat(path - s, d1 - r, axis=1)]
    blocks += [np.repeat(path, (d0 - r) + (dL - r), axis=1)]
    for i in range(r):
        for j in range(i + 1, r):
            g = np.sqrt(path[:, i] * path[:, j])
            M = np.zeros((path.shape[0], 4, 4))
            M[:, 0, 0], M[:, 1, 1], M[:, 2, 2], M[:, 3, 3] = path[:, i], path[:, j], path[:, j], path[:, i]
            M[:, 0, 1] = M[:, 1, 0] = M[:, 2, 3] = M[:, 3, 2] = g
            M[:, 1, 2] = M[:, 2, 1] = R[:, i]
            M[:, 0, 3] = M[:, 3, 0] = R[:, j]
            blocks.append(np.linalg.eigvalsh(M))
    P = d0 * d1 + d1 * dL
    ev = np.concatenate(blocks, axis=1)
    ev = np.sort(np.concatenate([ev, np.zeros((path.shape[0], P - ev.shape[1]))], axis=1), axis=1)
    return ev[0] if a.ndim == 1 else ev


def aligned_mode_step(singular_values, roots, eta) -> np.ndarray:
    r"""One GD step of a two-layer net on its aligned, balanced path: :math:`w_k\leftarrow w_k-\eta\,w_k(w_k^2-s_k)`.

    ``roots`` :math:`w_k=\sqrt{a_k}` (the common singular value of both factors on mode :math:`k`).
    The loss restricted to the path is :math:`\tfrac12\sum_k(w_k^2-s_k)^2` plus a constant, and
    :math:`\partial/\partial W_1` and :math:`\partial/\partial W_2` both equal :math:`w_k(w_k^2-s_k)`
    on mode :math:`k`, so one GD step on the full net is this map on every mode. Broadcasts over
    leading axes of ``roots``.
    """
    s = V.array("singular_values", singular_values, ndim=1, low=0.0)
    w = V.array("roots", roots, ndim=(1, 2))
    if w.shape[-1] != s.size:
        raise ValueError(f"roots: expected {s.size} modes in the last axis, got shape {w.shape}")
    eta = V.real("eta", eta, low=0.0, low_open=True)
    return w - eta * w * (w * w - s)
