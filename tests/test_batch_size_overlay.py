"""The batch-size overlay of a user's sweep (figures.batch_size.overlay): a CSV the test writes from the greedy noisy
quadratic's exact steps-to-target, the fitted hyperbola and B_crit against the values the sweep came from, the
drawn files, and bad files that name the column at fault."""
import json

import numpy as np
import pytest

import figures.batch_size as fb
import theory.batch_size as th
import theory.batch_size_fit as tf

LAM = 1.0 / np.arange(1, 31)


def _sweep(tmp_path, x, *, header=("batch_size", "steps"), noise=0.0, seed=0):
    s2, m0 = LAM.copy(), 1.0 / LAM
    s_min = th.greedy_min_steps(LAM, s2, m0, 0.2)
    b_crit = th.greedy_min_examples(LAM, s2, m0, 0.2) / s_min
    b = np.asarray(x) * b_crit
    steps = th.greedy_steps(LAM, s2, m0, b, 0.2)["steps"]
    steps = steps * np.exp(noise * np.random.default_rng(seed).standard_normal(b.size))
    path = tmp_path / "sweep.csv"
    rows = [",".join(header)] + [f"{bb:.10g},{ss:.10g}" for bb, ss in zip(b, steps)]
    path.write_text("\n".join(rows) + "\n")
    return path, b_crit, s_min


def test_overlay_recovers_b_crit_inside_the_window(tmp_path):
    """A sweep at B <= B_crit with 2 % scatter: B_crit within 10 % (the hyperbola's own accuracy there) and within
    4 standard errors plus that 10 % of E_min / S_min from the limits; the residual is the scatter's size."""
    path, b_crit, s_min = _sweep(tmp_path, np.geomspace(0.02, 1.0, 8), noise=0.02)
    assert fb.main(["overlay", str(path), "--out", str(tmp_path / "out")]) == 0   # the one drawing of this file
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == ["batch_size_overlay.json", "batch_size_overlay.pdf", "batch_size_overlay.png"]
    record = json.loads((tmp_path / "out" / "batch_size_overlay.json").read_text())
    est = {k: (v["value"], v["se"]) for k, v in record["estimates"].items()}
    assert abs(est["b_crit"][0] / b_crit - 1) <= 0.1 + 4 * est["b_crit"][1] / b_crit
    assert est["s_min"][0] == pytest.approx(s_min, rel=0.1 + 4 * est["s_min"][1] / s_min)
    assert 0.005 < record["rms_residual"] < 0.06
    assert record["rows"] == 8


def test_fit_residuals_across_the_window_edge(tmp_path):
    """Noiseless sweeps, so the only residual is the hyperbola's own error: one reaching 100 B_crit leaves residuals
    three times those of one inside the window (measured 1.0 % against 0.32 %; the test asks for 2x). Small in steps
    all the same: far above B_crit S/S_min - 1 is itself small, so a 1 % miss of S there is a large miss of the
    product. The columns are found by their spelled-out names."""
    path, _, _ = _sweep(tmp_path, np.geomspace(0.02, 100.0, 10), header=("Batch Size", "Steps to target"))
    wide = fb.read_sweep(path)
    assert wide["columns"] == {"batch_size": "Batch Size", "steps": "Steps to target"}
    inside, _, _ = _sweep(tmp_path / "..", np.geomspace(0.02, 1.0, 10))
    data = fb.read_sweep(inside)
    rms = [tf.fit_hyperbola(d["batch_size"], d["steps"])["rms"] for d in (wide, data)]
    assert rms[0] > 2 * rms[1]


def test_bad_sweeps_name_the_column(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("lr,loss\n0.1,1.0\n")
    with pytest.raises(ValueError, match="batch_size"):
        fb.overlay(bad, tmp_path)
    bad.write_text("batch,steps\n1,10\n2,x\n4,5\n")
    with pytest.raises(ValueError, match="steps: line 3"):
        fb.overlay(bad, tmp_path)
    bad.write_text("batch,steps\n1,10\n2,20\n4,40\n")   # steps growing with B: no trade-off
    with pytest.raises(ValueError, match="steps"):
        fb.overlay(bad, tmp_path)
