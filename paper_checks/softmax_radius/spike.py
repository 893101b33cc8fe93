r"""The learning-rate spike (Table 1, §6.5, Figure 10): under a 10,000x one-step spike Adam with the controller keeps
its accuracy while plain Adam and clipping collapse, in steplab's setting and, at the full budget, in the authors'
(Table 1's numbers, ``TABLE1``, also drawn by the figures; experiments ``softmax_radius.lr_spike``, ``archgrid``).
"""
from __future__ import annotations

import math

import numpy as np

from paper_checks import Budget, Categorical, Count, Result, Statistical, claim, mean_se
from paper_checks.softmax_radius import ARXIV, PAPER
from paper_checks.softmax_radius.experiments import archgrid, lr_spike
from sims import softmax_radius as S


TABLE1_QUOTE = ("Table 1. Median final test accuracy at 10 000× spike. A seed is divergent if final loss exceeds 10. "
                "Arch Plain Clip ρa -ctrl Transformer 31.8% 38.7% 95.3% MLP+LN 44.6% 51.5% 93.9% CNN+BN 13.4% 10.3% "
                "71.6%")
# Table 1 of the paper: median final test accuracy (%) after a 10,000x spike, plain Adam / clipping / controller
TABLE1 = {"transformer": (31.8, 38.7, 95.3), "mlp_ln3": (44.6, 51.5, 93.9), "cnn1d_bn": (13.4, 10.3, 71.6)}
TABLE1_NAMES = {"transformer": "Transformer", "mlp_ln3": "MLP+LN", "cnn1d_bn": "CNN+BN", "attention": "attention",
                "mlp_ln": "MLP+LN (steplab's)", "cnn_bn": "CNN+BN (steplab's)", "mlp": "MLP"}


def _ordering(med: np.ndarray) -> str:
    """The modes ordered by median final accuracy, lowest first (``plain < clip < controller``)."""
    return " < ".join(S.MODES[k] for k in np.argsort(med, kind="stable"))


def _median_se(values: np.ndarray, rng: np.random.Generator, floor: float) -> tuple[float, float]:
    """Median over seeds and its bootstrap standard error (1000 resamples of the seeds), at least ``floor``."""
    boot = np.median(values[rng.integers(0, values.size, (1000, values.size))], axis=1)
    return float(np.median(values)), max(float(np.std(boot)), floor)


def median_band_coverage(n: int, z: float, rng: np.random.Generator, trials: int = 4000) -> float:
    r"""How often the checks' band holds two equal medians: :math:`P(|\mathrm{med}\,a - \mathrm{med}\,b| \le z\sqrt2\,
    \widehat{\mathrm{SE}}_a)` for :math:`a, b` two independent samples of ``n`` standard normals and
    :math:`\widehat{\mathrm{SE}}_a` :func:`_median_se`'s bootstrap (without its floor, which only widens the band), by
    simulation over ``trials`` pairs. With few seeds the bootstrap SE is itself noisy (at 5 seeds its 5 % quantile is
    half the true SE), so a 4-SE band covers less than the normal 99.994 %."""
    held = 0
    for start in range(0, trials, 500):
        m = min(500, trials - start)
        a, b = rng.standard_normal((2, m, n))
        boot = np.median(a[:, rng.integers(0, n, (1000, n))], axis=2)
        held += int(np.sum(np.abs(np.median(a, 1) - np.median(b, 1)) <= z * math.sqrt(2) * boot.std(axis=1)))
    return held / trials


def _authors_checks(budget: Budget) -> tuple[list, list]:
    """Table 1 against the authors' setting, per architecture: the controller's median against the unspiked
    controller's (steplab's prediction: the capped spike step changes nothing), and the same seed by seed; plain
    Adam's median against clipping's (Adam normalizes the gradient, so clipping ||g|| ≤ 1 does not shorten the spike
    step), each cell with Table 1's number as the paper's value; and the controller's median just before the spike
    against plain Adam's (steplab's prediction: the controller leaves ordinary training alone)."""
    checks, rows, covers = [], [], {}
    rng = np.random.default_rng(0)
    n_test = S.archgrid_digits()["y_test"].size
    for arch in budget.pick(quick=(), full=S.ARCHGRID_NAMES):
        out = archgrid(budget, arch=arch)
        acc = 100 * out["spiked.final_acc"]
        mode = out["spiked.mode"]
        calm = 100 * out["calm.final_acc"]
        floor = 100 / n_test  # one test image: the accuracy's resolution, the smallest standard error it can have
        (m_plain, s_plain), (m_clip, s_clip), (m_ctrl, s_ctrl) = (_median_se(acc[mode == c], rng, floor) for c in range(3))
        m_calm, _ = _median_se(calm, rng, floor)
        paper = TABLE1[arch]
        name = TABLE1_NAMES[arch]
        n_seeds = int(np.sum(mode == 2))
        if n_seeds not in covers:  # its own generator: the medians' bootstrap draws stay those of the rng above
            covers[n_seeds] = median_band_coverage(n_seeds, 4.0, np.random.default_rng(1))
        cover = covers[n_seeds]
        few = (f"; with {n_seeds} seeds that bootstrap SE is itself noisy: for normal seed scatter the band holds two "
               f"equal medians {100 * cover:.1f} % of the time (simulated, median_band_coverage), not 99.994 %")
        # two medians over the same number of seeds, each with our spread: the SE of their difference is sqrt(2) x ours
        # (the paper's 5-seed median is taken to scatter as ours does)
        checks.append(Statistical(
            f"{name} (authors' setting): median final test accuracy % with the controller", estimate=m_ctrl,
            se=math.sqrt(2) * s_ctrl, predicted=m_calm, paper=paper[2], quote=TABLE1_QUOTE, where=f"{ARXIV}, Table 1",
            rivals={"the spike costs the controller as much as plain Adam": m_plain},
            why="4 SE of a difference of two medians over seeds (bootstrap SE of ours, times sqrt 2)" + few))
        # the same prediction seed by seed: a spiked controller run and its unspiked twin share the initialization
        # and the full batch, so the seeds' own spread (most of the medians' band) cancels in their difference. Its
        # "0" holds to this five-seed resolution only: on the CNN+BN, ten further seeds (5-14, 2026-12-03) put the
        # capped spike's cost at 2.7 +- 0.8 points (13 of 15 seeds below their twin), below this band
        paired = acc[mode == 2] - calm
        plain_paired = acc[mode == 0] - calm
        m_paired, s_paired = mean_se(paired)
        checks.append(Statistical(
            f"{name} (authors' setting): final test accuracy % of the spiked controller minus the same seed's "
            "unspiked run, mean over seeds", estimate=float(m_paired),
            se=max(float(s_paired), floor / math.sqrt(paired.size)), predicted=0.0, dof=paired.size - 1,
            rivals={"the spike costs the controller as much as plain Adam": float(plain_paired.mean())},
            why="standard error of the mean of independent per-seed differences (floored at one test image over "
                "sqrt(seeds)); the paired form resolves a cost of the spike a few times smaller than the medians' "
                "band, but at five seeds its band is still several points wide: the CNN+BN's ~3-point cost, measured "
                "on 15 seeds outside this claim (docs/papers/sao2026.md), is inside it"))
        checks.append(Statistical(
            f"{name} (authors' setting): median final test accuracy % of plain Adam and with clipping",
            estimate=np.array([m_plain, m_clip]), se=math.sqrt(2) * np.array([s_plain, s_clip]),
            predicted=np.array([m_clip, m_plain]), paper=np.array(paper[:2]), quote=TABLE1_QUOTE,
            where=f"{ARXIV}, Table 1",
            why="Adam's step is scale-free in the gradient, so clipping leaves the spike step's length: plain and clip "
                "predict each other; 4 SE of a difference of two medians (bootstrap SE of ours, times sqrt 2)" + few
                + ". No rival: a wrecked run recovers more or less, so 5-seed medians scatter by tens of points and "
                "cannot tell clipping from no spike here (the per-seed comparison is in the detail; steplab's "
                "setting's count rejects 'clipping protects')"))
        pre_acc = 100 * out["spiked.test_acc"][:, 49]
        (m_pre_plain, _), (m_pre_ctrl, s_pre_ctrl) = (_median_se(pre_acc[mode == c], rng, floor) for c in (0, 2))
        binds_pre = float(np.mean(out["spiked.scale"][mode == 2][:, :50] < 1))
        checks.append(Statistical(
            f"{name} (authors' setting): median test accuracy % just before the spike (step 49), controller vs "
            "plain Adam", estimate=m_pre_ctrl, se=math.sqrt(2) * s_pre_ctrl, predicted=m_pre_plain,
            why="steplab's prediction: the controller cuts only steps that would leave rho_a, which ordinary steps "
                f"rarely do (here {100 * binds_pre:.0f}% of the first 50), so it reaches the spike where plain Adam "
                "does; without this a controller that stalled training would 'keep its accuracy' trivially. 4 SE of "
                "a difference of two medians (bootstrap SE of ours, times sqrt 2)" + few + ". No rival: what a "
                "stalled controller would lose depends on when it stalls"))
        pre = np.median(pre_acc)
        ctrl = mode == 2
        binds = float(np.mean(out["spiked.scale"][ctrl][:, np.arange(200) != 50] < 1))
        cells = []
        for c, v in zip(range(3), (m_plain, m_clip, m_ctrl)):
            sel = acc[mode == c]
            n_div = int(out["spiked.diverged"][mode == c].sum())
            cells.append(f"{v:.1f} [{sel.min():.0f}–{sel.max():.0f}]" + (f" ({n_div} div.)" if n_div else ""))
        below = int(np.sum(acc[mode == 1] < calm - 5))  # seeds are paired: the same init and full batch
        rows.append(f"{name}, {int(ctrl.sum())} seeds (pre-spike {pre:.1f}%, unspiked controller {m_calm:.1f}%): "
                    + " / ".join(cells) + f"; Table 1 {' / '.join(f'{v:.1f}' for v in paper)}; clipping ends more than 5 "
                    f"points below the same seed's unspiked run in {below}/{int(ctrl.sum())} seeds; the controller also "
                    f"cut {100 * binds:.0f}% of the ordinary steps")
    return checks, rows


@claim(
    "sao2026.lr_spike_controller", paper=PAPER, provenance="quoted", kind="qualitative",
    source="Table 1; §6.5, Figure 10; §5.3 eq. (19)", quote=TABLE1_QUOTE, where=f"{ARXIV}, Table 1",
    statement="Under a 10,000× one-step learning-rate spike, Adam with the controller keeps its accuracy while plain "
              "Adam and Adam with gradient clipping (‖g‖ ≤ 1) collapse. Table 1's numbers (median final test "
              "accuracy: Transformer 31.8/38.7/95.3 %, MLP+LN 44.6/51.5/93.9 %, CNN+BN 13.4/10.3/71.6 %, "
              "plain/clip/controller) are compared, at the full budget only, in the setting of the authors' script "
              "for Table 1 (experiments/archgrid/run.py, which differs from the text: full-batch Adam at lr 0.015 "
              "for every architecture, a one-step spike at step 50, the controller capping lr·‖g‖ at ρ_a along the "
              "gradient rather than eq. (19)'s Adam step, a 'Transformer' that embeds each image as one token so its "
              "softmax runs over one key, a 3-layer GELU MLP+LN and a 1-d CNN+BN); steplab's own setting (its "
              "models, minibatch Adam, per-model learning rates) is a second row, at both budgets. Table 3 "
              "(ResNet-18 on CIFAR-10) is not reproduced on CPU.",
    latex=r"\mathrm{acc}_{\rm ctrl}\approx\mathrm{acc}_{\rm no\,spike}\gg\mathrm{acc}_{\rm plain}\approx\mathrm{acc}_{\rm clip}",
)
def lr_spike_controller(budget: Budget) -> Result:
    r"""steplab's own setting (:func:`lr_spike`), per run: survived = not diverged and final test accuracy within
    5 points of the accuracy just before the spike. Prediction: exactly the controller runs survive. Rivals:
    clipping protects as well; nothing survives the spike; plain Adam recovers by itself. Per model, the mode with
    the best median final accuracy is the controller (rival: clipping). At the full budget, the authors' setting
    (:func:`archgrid`), per architecture: the controller's median final test accuracy equals the unspiked
    controller's (rival: plain Adam's), and so does each seed's spiked controller run its unspiked twin's (the mean
    per-seed difference is 0; rival: plain Adam's difference), plain Adam's and clipping's medians predict each other,
    and Table 1's numbers are the paper's values of those medians (a miss is 'differs from paper'); just before the
    spike the controller's median equals plain Adam's."""
    out = lr_spike(budget)
    s = int(out["spike_step"])
    before = int(np.flatnonzero(np.asarray(out["eval_step"]) == s - 1)[0])  # the recorded step just before the spike
    survived, mode, rows, best, level = [], [], [], [], []
    ctrl, clip, plain = S.mode_code("controller"), S.mode_code("clip"), S.mode_code("plain")
    for tag in [str(t) for t in np.asarray(out["runs"])]:
        acc, m, div = out[f"{tag}.test_acc"], out[f"{tag}.mode"], out[f"{tag}.diverged"]
        pre = acc[:, before]
        seed = np.asarray(out[f"{tag}.seed"])
        # paired by seed: the same initialization and minibatches in every mode
        plain_pre = {int(k): v for k, v in zip(seed[m == plain], pre[m == plain])}
        level.extend(abs(v - plain_pre[int(k)]) <= 0.05 for k, v in zip(seed[m == ctrl], pre[m == ctrl]))
        ok = ~div & (acc[:, -1] >= pre - 0.05)
        survived.append(ok)
        mode.append(m)
        meds, cells = [], []
        for code, name in enumerate(S.MODES):
            sel = m == code
            med, n_div = S.finite_median(acc[sel, -1], div[sel])
            fin = acc[sel, -1][~div[sel]]
            meds.append(med if n_div < sel.sum() else -np.inf)
            cells.append(f"{100 * med:.1f}" + (f" [{100 * fin.min():.0f}–{100 * fin.max():.0f}]" if fin.size else "")
                         + (f" ({n_div} div.)" if n_div else ""))
        best.append(S.MODES[int(np.argmax(meds))])
        arch = tag.rsplit("_", 1)[0]
        rows.append(f"{TABLE1_NAMES.get(arch, arch)} (η {tag.rsplit('_', 1)[1]}, pre-spike {100 * np.median(pre):.1f}%): "
                    + " / ".join(cells) + f"; ordering {_ordering(np.array(meds))}")
    survived, mode = np.concatenate(survived), np.concatenate(mode)
    authors, authors_rows = _authors_checks(budget)
    return Result(
        checks=[Count("steplab's setting: run keeps its pre-spike accuracy (within 5 points, not diverged)",
                      measured=survived, predicted=mode == ctrl,
                      rivals={"clipping ‖g‖ ≤ 1 protects as well": (mode == ctrl) | (mode == clip),
                              "no method survives a 10,000× spike": np.zeros_like(survived),
                              "plain Adam recovers by itself": np.ones_like(survived)},
                      why="5 points ≈ the seed-to-seed spread of test accuracy on 450 test images"),
                Count("steplab's setting: controller run within 5 points of plain Adam's (same seed) just before the "
                      "spike", measured=np.array(level), predicted=True,
                      why="the controller cuts only steps that would leave rho_a, which ordinary steps rarely do; "
                          "without this a controller that stalled training would keep its pre-spike accuracy "
                          "trivially. 5 points as above. No rival: what a stalled controller loses depends on when it "
                          "stalls"),
                Categorical("steplab's setting: mode with the best median final accuracy, per model",
                            measured=np.array(best), predicted="controller", rivals={"clipping ‖g‖ ≤ 1 is best": "clip"},
                            why="medians over seeds of the final test accuracy (450 test images)"),
                *authors],
        detail=("steplab's setting, median final test accuracy % plain / clip / controller [min–max over seeds]: "
                + "; ".join(rows) + (". The authors' setting (Table 1's script), plain / clip / controller: "
                                     + "; ".join(authors_rows) if authors_rows else
                                     ". Table 1 is compared at the full budget only (the authors' setting)")
                + ". Table 3 (ResNet-18 on CIFAR-10) is not reproduced on CPU"),
        arrays={k.replace(".", "_"): np.asarray(v) for k, v in out.items() if isinstance(v, np.ndarray) and v.dtype != object},
        seed=0,
    )
