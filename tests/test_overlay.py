r"""``steplab overlay``: the noisy quadratic model fitted to a logged run (:mod:`theory.noisy_quadratic_fit`), read from
a CSV and drawn (:mod:`figures._overlay`).

The truth is a known NQM: 400 curvatures at the midpoints of equal bins of :math:`\log\lambda` over the range the fit
models, a share :math:`w_i \propto \lambda_i^p` of the initial excess :math:`A` and of the noise :math:`S` each, and an
irreducible :math:`L_\star`, run along a warmup-constant-decay schedule by :func:`theory.nqm.moment_recursion` (per
step; the fit's own code advances in closed-form blocks on Gauss--Legendre nodes, so the two share no code but the
definition). Logs are its exact expected loss times :math:`1 + \tau\xi_t` with i.i.d. standard normal :math:`\xi_t`
and :math:`\tau` = 2 %, from ``np.random.default_rng(seed)``.
"""
from __future__ import annotations

import csv
import functools
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest

import theory.noisy_quadratic_fit as F
import theory.nqm as tn

T, WARMUP, DECAY_FROM, PEAK = 2000, 200, 1400, 0.5
TRUTH = {"L_star": 0.1, "A": 2.0, "S": 0.4, "p": 0.5}
TAU = 0.02          # relative logging noise
EVERY = 2           # the full log: every 2nd step, 1001 rows; its every-10th row is a log every 20 steps
QUANTITIES = ("L_star", "A", "S", "p", "floor")
# 3 standard errors: a Gaussian estimate lies farther from the truth with probability 0.27 %; the assertions below
# check five quantities on two logs of one seed, so a correct fit fails them with probability under 3 %
# (Bonferroni), while a bias of a few standard errors fails them (the calibration test checks the errors' size)
Z = 3.0


def schedule() -> np.ndarray:
    """Linear warmup to PEAK over WARMUP steps, constant, linear decay to 0 from DECAY_FROM to T."""
    t = np.arange(T)
    return np.where(t < WARMUP, PEAK * (t + 1) / WARMUP,
                    np.where(t < DECAY_FROM, PEAK, PEAK * (T - t) / (T - DECAY_FROM)))


@functools.cache
def truth() -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
    """``(step, lr, expected loss, true values)`` of the known NQM at the logged steps (every EVERY-th step)."""
    eta = schedule()
    edges = np.linspace(math.log(F.SLOW_FACTOR / eta.sum()), math.log(1 / eta.max()), 401)
    lam = np.exp(0.5 * (edges[:-1] + edges[1:]))
    w = lam ** TRUTH["p"] / np.sum(lam ** TRUTH["p"])
    m = tn.moment_recursion(lam, eta, 2 * TRUTH["A"] * w / lam, sigma_a=np.sqrt(TRUTH["S"] * w))
    loss = TRUTH["L_star"] + tn.expected_loss(lam, m)
    floor = TRUTH["L_star"] + float(np.sum(tn.stationary_excess(lam, PEAK, np.sqrt(TRUTH["S"] * w))))
    step = np.arange(0, T + 1, EVERY)
    return step, np.append(eta, eta[-1])[step], loss[step], {**TRUTH, "floor": floor}


def noisy(seed: int, tau: float = TAU) -> np.ndarray:
    _, _, loss, _ = truth()
    return loss * (1 + tau * np.random.default_rng(seed).standard_normal(loss.size))


def fits(seed: int) -> tuple[dict, dict]:
    """The fits of the full log and of its every 10th row."""
    step, lr, _, _ = truth()
    y = noisy(seed)
    return F.fit_log(step, lr, y), F.fit_log(step[::10], lr[::10], y[::10])


# ----------------------------------------------------------------------------- the fit against the truth
def test_a_noise_free_log_gives_back_the_truth():
    """Without noise the estimates are the truth up to the quadrature of the spectrum: the fit's Gauss--Legendre nodes
    against the truth's 400 midpoint modes, whose own error is ~ (bin width)^2 ~ 1e-4 relative at most; measured
    2e-5. The standard errors are then tiny (only the numerical mismatch is left as residual)."""
    step, lr, loss, true = truth()
    for n_modes in (16, 24):
        fit = F.fit_log(step, lr, loss, n_modes=n_modes)
        for k in QUANTITIES:
            assert fit["estimates"][k][0] == pytest.approx(true[k], rel=1e-4), (n_modes, k)
        assert fit["describes"] and fit["at_bound"] == []


def test_truth_lies_within_the_intervals_of_the_full_and_the_subsampled_log():
    full, tenth = fits(seed=0)
    _, _, _, true = truth()
    for fit in (full, tenth):
        for k in QUANTITIES:
            v, se = fit["estimates"][k]
            assert abs(v - true[k]) <= Z * se, (k, v, se, true[k])
        assert fit["describes"], fit["verdict"]


def test_every_tenth_row_agrees_with_the_full_log():
    r"""The estimates of the log's every 10th row against those of the full log.

    The full log's estimate lies inside the subsample's interval and the two intervals overlap. Checking the
    subsample's estimate against the *full* log's 3-SE interval would be wrong: the subsample has its own noise, and
    for nested samples the difference of the two estimates has variance :math:`SE_{10}^2 - SE_1^2` (the efficient
    estimator is uncorrelated with its difference from a less efficient one), here about :math:`9\,SE_1^2`, so that
    check would fail a third of the time. So the difference is held to 3 of its own standard deviations. The errors
    scale like :math:`1/\sqrt n` (independent rows over the same schedule): their ratio lies near
    :math:`\sqrt{10} = 3.16`; [2.2, 4.5] allows for edge effects of the sparser log (measured 3.0-3.3).
    """
    full, tenth = fits(seed=1)
    for k in QUANTITIES:
        (v1, s1), (v10, s10) = full["estimates"][k], tenth["estimates"][k]
        assert abs(v1 - v10) <= Z * s10, k
        assert v1 - Z * s1 <= v10 + Z * s10 and v10 - Z * s10 <= v1 + Z * s1, k
        assert abs(v1 - v10) <= Z * math.sqrt(s10**2 - s1**2), k
        assert 2.2 <= s10 / s1 <= 4.5, (k, s10 / s1)


def test_standard_errors_are_calibrated():
    r"""Over 30 seeds, :math:`z = (\hat\theta - \theta)/\mathrm{SE}` has mean square near 1 for every quantity and log.

    For Gaussian :math:`z` the mean of 30 squares is :math:`\chi^2_{30}/30`: below 0.42 or above 2.0 with
    probability 0.1 % together (quantiles 0.0005 and 0.9995: 12.7 and 60.0 / 30); ten such checks fail a correct fit
    with probability about 1 %. Standard errors off by a factor 2 either way put the mean square near 4 or 0.25.
    The log is described by the model on every seed (the verdict's threshold is 3 of its standard errors).
    """
    _, _, _, true = truth()
    z = {"full": [], "tenth": []}
    for seed in range(100, 130):
        for label, fit in zip(z, fits(seed)):
            z[label].append([(fit["estimates"][k][0] - true[k]) / fit["estimates"][k][1] for k in QUANTITIES])
            assert fit["describes"], (seed, label, fit["verdict"])
    for label, rows in z.items():
        mean_square = np.mean(np.square(rows), axis=0)
        for k, ms in zip(QUANTITIES, mean_square):
            assert 0.42 <= ms <= 2.0, (label, k, ms)


def test_the_tables_are_the_moment_recursion():
    r"""The fit's tables :math:`G, H` at the logged steps equal :func:`theory.nqm.moment_recursion` along the
    interpolated schedule (per step, up to round-off: 1e-10 relative), and along the blocked schedule when a long run
    is advanced in blocks (each block in closed form against its steps one by one)."""
    step = np.array([0, 3, 10, 11, 40, 100])
    lr = np.array([0.1, 0.3, 0.2, 0.2, 0.05, 0.0])
    lam = np.array([1e-3, 0.1, 1.0, 3.0])
    for max_blocks in (10**6, 17):
        rate, length, ends = F._blocks(step.astype(float), lr, max_blocks=max_blocks)
        G, H = F._tables(rate, length, ends, lam, step.size)
        per_step = np.repeat(rate, length.astype(int))
        if max_blocks > step[-1]:
            np.testing.assert_allclose(per_step, np.interp(np.arange(100), step, lr), rtol=1e-14)
        at = np.r_[0, np.cumsum(length.astype(int))][np.r_[False, ends >= 0]]
        assert list(at) == list(step[1:])
        np.testing.assert_allclose(G[1:], tn.moment_recursion(lam, per_step, 1.0)[at], rtol=1e-10)
        np.testing.assert_allclose(H[1:], 0.5 * lam * tn.moment_recursion(lam, per_step, 0.0, sigma_a=1.0)[at],
                                   rtol=1e-10)


def test_a_long_run_is_fitted_in_blocks_at_the_same_estimates(monkeypatch):
    """A run of 10x the block budget is advanced in blocks of 10 steps: the estimates move by a small fraction of
    their errors (the blocked schedule differs from the per-step one only inside each block, by O(block^2 * slope))."""
    step, lr, _, _ = truth()
    y = noisy(seed=2)
    one = F.fit_log(step, lr, y)
    monkeypatch.setattr(F, "MAX_BLOCKS", T // 10)
    blocked = F.fit_log(step, lr, y)
    for k in QUANTITIES:
        assert abs(blocked["estimates"][k][0] - one["estimates"][k][0]) <= 0.2 * one["estimates"][k][1], k


# ----------------------------------------------------------------------------- goodness of fit
def _constant_lr_u_shape(step):
    """At a constant rate the NQM's loss is monotone (with one spectrum for excess and noise, L - F is a positive
    multiple of a decreasing sum of exponentials, or a negative one): a loss that falls and rises again is not."""
    return np.full(step.size, 0.1), 0.5 + np.exp(-step / 100) + 1e-4 * step


def _periodic_bump(step):
    _, lr, loss, _ = truth()
    return lr, loss * (1 + 0.05 * np.sin(2 * np.pi * step / 400))


def _spike(step):
    _, lr, loss, _ = truth()
    return lr, loss * np.where(np.abs(step - 1000) < 10, 1.5, 1.0)


@pytest.mark.parametrize("make", [_constant_lr_u_shape, _periodic_bump, _spike], ids=lambda f: f.__name__[1:])
def test_a_log_the_nqm_cannot_describe_is_said_not_to_fit(make):
    step, _, _, _ = truth()
    lr, loss = make(step.astype(float))
    y = loss * (1 + TAU * np.random.default_rng(3).standard_normal(step.size))
    fit = F.fit_log(step, lr, y)
    assert not fit["describes"] and fit["chi2_reduced"] > fit["chi2_threshold"]
    assert fit["verdict"].startswith("the noisy quadratic model does not describe this log: ")
    clean = F.fit_log(step, truth()[1], noisy(3))
    assert clean["describes"] and clean["verdict"].startswith("the noisy quadratic model describes this log (")


def test_noise_level_reads_the_scatter_not_the_trend():
    """On a smooth curve times 1 + tau xi the estimate is tau within its sampling error (relative SE of the
    median-based scale over n pseudo-residuals ~ 1.45/sqrt(n): 5 % at n = 1000; 4 SE allowed), at any trend; a
    single spike does not move it by more than one order statistic."""
    step, _, loss, _ = truth()
    for tau in (0.005, 0.02, 0.1):
        y = loss * (1 + tau * np.random.default_rng(4).standard_normal(loss.size))
        assert F.noise_level(step, y) == pytest.approx(tau, rel=4 * 1.45 / math.sqrt(loss.size))
        spiked = y.copy()
        spiked[500] *= 10
        assert F.noise_level(step, spiked) == pytest.approx(F.noise_level(step, y), rel=0.02)
    assert F.noise_level(step, loss) < 1e-3      # the trend alone: curvature leaks only at the fast start


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("change, name, value", [
    (lambda s, e, y: (np.r_[s[:5], s[4], s[6:]], e, y), "step", "got 8 at row 5 after 8"),
    (lambda s, e, y: (s + 0.5, e, y), "step", "0.5"),
    (lambda s, e, y: (s, np.r_[e[:3], -0.1, e[4:]], y), "lr", "-0.1"),
    (lambda s, e, y: (s, 0 * e, y), "lr", "zeros"),
    (lambda s, e, y: (s, e, np.r_[y[:7], np.nan, y[8:]]), "loss", "nan"),
    (lambda s, e, y: (s, e, np.r_[y[:7], np.inf, y[8:]]), "loss", "inf"),
    (lambda s, e, y: (s, e, np.r_[y[:7], -1.0, y[8:]]), "loss", "-1.0"),
    (lambda s, e, y: (s[:4], e[:4], y[:4]), "loss", "4 rows"),
], ids=["step-repeated", "step-fraction", "lr-negative", "lr-all-zero", "loss-nan", "loss-inf", "loss-negative",
        "too-few-rows"])
def test_bad_values_name_the_argument_and_the_value(change, name, value):
    step, lr, loss, _ = truth()
    s, e, y = change(step[:20].astype(float), lr[:20], loss[:20])
    with pytest.raises(ValueError, match=rf"^{name}: .*{value}"):
        F.fit_log(s, e, y)


# ----------------------------------------------------------------------------- the CSV and the command line
def _write(path, header, rows):
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


def _log_rows(every: int = 10):
    step, lr, _, _ = truth()
    return [(int(s), e, y) for s, e, y in zip(step, lr, noisy(5))][::every]


@pytest.mark.parametrize("header", [("step", "lr", "loss"), ("Iteration", "Learning Rate", "train/loss"),
                                    ("GLOBAL_STEP", "eta", "Training-Loss"), ("t", "step_size", "objective")])
def test_common_column_names_are_found_in_any_case(tmp_path, header):
    from figures._overlay import read_log

    rows = _log_rows()
    data = read_log(_write(tmp_path / "run.csv", ("note", *header), [("x", *r) for r in rows]))
    assert data["columns"] == dict(zip(("step", "lr", "loss"), header))
    np.testing.assert_array_equal(data["loss"], [r[2] for r in rows])


def test_options_map_any_other_column_names(tmp_path):
    from figures._overlay import read_log

    rows = _log_rows()
    path = _write(tmp_path / "run.csv", ("k", "gamma", "nll", "loss"), [(*r, 1.0) for r in rows])
    data = read_log(path, step="k", lr="Gamma", loss="nll")
    assert data["columns"] == {"step": "k", "lr": "gamma", "loss": "nll"}
    np.testing.assert_array_equal(data["step"], [r[0] for r in rows])


@pytest.mark.parametrize("header, rows, extra, words", [
    (("step", "loss"), [(0, 1.0)], [], ["lr:", "lacks a lr column", "'step', 'loss'"]),
    (("step", "lr", "loss"), [(0, 0.1, 1.0), (1, 0.1, "n/a")], [], ["loss:", "line 3", "'n/a'", "expected a number"]),
    (("step", "lr", "loss"), [(0, 0.1, 1.0), (2, 0.1, 0.9), (2, 0.1, 0.8)] * 3, [], ["step:", "strictly increasing"]),
    (("step", "lr", "loss"), [(i, -0.1 if i == 3 else 0.1, 1.0) for i in range(9)], [], ["lr:", "-0.1", ">= 0"]),
    (("step", "lr", "loss"), [(i, 0.1, "inf" if i == 3 else 1.0) for i in range(9)], [], ["loss:", "inf", "finite"]),
    (("step", "lr", "loss"), [(i, 0.1, 1.0) for i in range(3)], [], ["loss:", "3 rows", "4 parameters"]),
    (("step", "lr", "loss"), [(0, 0.1, 1.0)], ["--lr", "rate"], ["lr:", "'rate' given by --lr"]),
    (("step", "lr", "loss"), [(i, 0.1, 1.0) for i in range(9)], ["--modes", "2"], ["n_modes:", ">= 4"]),
], ids=["missing-column", "non-numeric", "non-increasing", "negative-lr", "non-finite-loss", "too-few-rows",
        "unknown-option-column", "modes"])
def test_bad_csv_is_a_one_line_usage_error(tmp_path, capsys, header, rows, extra, words):
    from figures import _cli

    path = _write(tmp_path / "run.csv", header, rows)
    with pytest.raises(SystemExit) as exc:
        _cli.main(["overlay", str(path), "--out", str(tmp_path / "o"), *extra])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    message = err.strip().splitlines()[-1]
    assert message.startswith("steplab overlay: error: ") and "Traceback" not in err
    for w in words:
        assert w in message, (w, message)


def test_cli_prints_estimates_verdict_and_paths_and_draws_without_layout_warnings(tmp_path, capsys):
    from figures import _cli
    from figures.plot import LayoutWarning

    path = _write(tmp_path / "run.csv", ("iteration", "learning_rate", "train_loss"), _log_rows(every=1))
    with warnings.catch_warnings():
        warnings.simplefilter("error", LayoutWarning)
        assert _cli.main(["overlay", str(path), "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    for k in QUANTITIES:
        assert any(line.split()[:1] == [k] and "±" in line for line in out.splitlines()), k
    assert "the noisy quadratic model describes this log (" in out
    written = out.strip().splitlines()[-1]
    assert written.startswith("wrote ")
    for ext in ("png", "pdf", "json"):
        assert (tmp_path / "o" / f"noisy_quadratic_overlay.{ext}").stat().st_size > 0
        assert f"noisy_quadratic_overlay.{ext}" in written


def test_the_plot_shows_the_data_range_only(tmp_path, monkeypatch):
    """x from the first to the last logged step; y from the lowest to the highest of log and fit (with the band),
    within a 10 % margin on a log axis; no layout problem."""
    import figures.plot as plot
    from figures._overlay import overlay

    drawn = {}

    def keep(fig, name, out, **kwargs):
        drawn["problems"] = plot.check_layout(fig)
        drawn["axes"] = fig.axes
        return []

    monkeypatch.setattr(plot, "save", keep)
    rows = _log_rows(every=1)[5:]            # starts at step 10: the axis must too
    fit = overlay(_write(tmp_path / "run.csv", ("step", "lr", "loss"), rows), tmp_path)
    assert drawn["problems"] == []
    ax = drawn["axes"][0]
    assert ax.get_xlim() == (rows[0][0], rows[-1][0])
    y = np.array([r[2] for r in rows])
    band = 1.96 * fit["predicted_se"]
    lo, hi = min(y.min(), (fit["predicted"] - band).min()), max(y.max(), (fit["predicted"] + band).max())
    ylo, yhi = ax.get_ylim()
    assert lo / 1.1 - 1e-12 <= ylo <= lo and hi <= yhi <= hi * 1.1 + 1e-12


def test_steplab_overlay_imports_no_jax(tmp_path):
    """The console command runs in a fresh interpreter without loading JAX (nor the claims)."""
    path = _write(tmp_path / "run.csv", ("step", "lr", "loss"), _log_rows())
    code = ("import sys; from figures import _cli; rc = _cli.main(['overlay', sys.argv[1], '--out', sys.argv[2]]); "
            "print('jax' in sys.modules, 'paper_checks' in sys.modules, rc)")
    done = subprocess.run([sys.executable, "-c", code, str(path), str(tmp_path / "o")], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "False False 0"


def test_example_writes_a_log_and_recovers_its_parameters(tmp_path):
    """examples/overlay.py on a short run: the truth within 3 standard errors (see Z), files written."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("steplab_example_overlay",
                                                  Path(__file__).resolve().parent.parent / "examples" / "overlay.py")
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    out = ex.run(tmp_path, T=600, every=3, seed=1)
    assert out["describes"] and all(abs(z) <= Z for z in out["z"].values()), out["z"]
    assert all(p.exists() for p in out["paths"])
    with pytest.raises(ValueError, match="noise"):
        ex.run(tmp_path, noise=0.0)
