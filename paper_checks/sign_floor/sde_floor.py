r"""The first-order SignSGD SDE's floor: simulated, it settles on the Laplace-law constant, not the exact chain's
(experiment ``sign_floor.sign_sde_floor``, which runs :func:`sims.sde.sde_sweep`; the claim declares ``uses=("sde",)``).
"""
from __future__ import annotations

import numpy as np

from paper_checks import Budget, Result, Statistical, claim
from paper_checks.sign_floor import PAPER, SOURCE, WHY_MC, Z
from paper_checks.sign_floor.experiments import ladder_constants, sign_sde_floor
from theory import sign_floor as T


@claim("singh2026.sign_sde_floor_constant", paper=PAPER, provenance="derived", kind="statistical", source=SOURCE,
       uses=("sde",),
       coarse_reason=("the SDE's constant is the Monte Carlo floor of an Euler-Maruyama simulation at the eta^2 "
                      "scale: its 4-SE band is ~10 % at the quick budget's paths, while the rivals it rejects differ "
                      "by 1.3x to 86x"),
       statement=("The first-order SignSGD SDE, simulated, settles on an eta^2 floor with the Laplace-law constant "
                  "C_SDE = (1 - e^2)^2/(4 e^2), not the exact chain's: the ratio C_chain/C_SDE of the measured "
                  "constants (uniform offset) is 3.2 at sigma = 1, 86 at sigma = 0.5 and 1.3 at sigma = 2 -- an O(eta^2) floor lies "
                  "below "
                  "the resolution of a first-order weak approximation."),
       latex=r"C_{\rm SDE} = \frac{(1-e_\sigma^2)^2}{4e_\sigma^2} \ne C_{\rm unif} = \frac{1}{4e_\sigma^2} - \frac1{12}")
def check_sign_sde(budget: Budget) -> Result:
    """Simulated SDE constants E f/(a eta^2) at sigma = 0.5, 1, 2 against the Laplace-law constant (rivals: the chain's
    C_unif and C_mid); and the ratio of the chain's measured constant (integer ladder, uniform offsets) to the SDE's
    measured constant against C_unif/C_SDE (rival: ratio 1, the SDE reproduces the chain)."""
    r = sign_sde_floor(budget)
    lad = ladder_constants(budget)
    s = r["sigma"]
    sde, unif, mid = (np.array([fn(v) for v in s]) for fn in (T.c_sde, T.c_unif, T.c_mid))
    idx = np.array([int(np.flatnonzero(np.isclose(lad["sigma"], v))[0]) for v in s])
    chain, chain_se = lad["c_unif"][idx], lad["c_unif_se"][idx]
    ratio = chain / r["c_sde_sim"]
    ratio_se = ratio * np.hypot(chain_se / chain, r["c_sde_se"] / r["c_sde_sim"])  # independent runs: delta method
    why_em = (WHY_MC + "; no bias term: the Euler-Maruyama error of the discontinuous drift at dt = b/80 is not "
              "bounded here, so any shows up as a failure (the paths' relative SE is 4-7 %)")
    return Result(
        checks=[
            Statistical("C_SDE(sim)/C_SDE(Laplace law) of the simulated first-order SDE", r["c_sde_sim"] / sde,
                        r["c_sde_se"] / sde, np.ones(len(s)), z=Z, why=why_em,
                        rivals={"the exact chain's C_unif": unif / sde, "the exact chain's C_mid": mid / sde}),
            Statistical("ratio C_chain/C_SDE of the measured constants, over its prediction C_unif/C_SDE",
                        ratio / (unif / sde), ratio_se / (unif / sde), np.ones(len(s)), z=Z,
                        why=why_em + "; the ladder is exact",
                        rivals={"ratio 1 (the SDE reproduces the chain's constant)": sde / unif}),
        ],
        detail=(", ".join(f"σ={v:g}: C_SDE sim {m:.4f}±{e:.4f} (Laplace {p:.4f}), chain/SDE {q:.2f}±{qe:.2f}"
                          for v, m, e, p, q, qe in zip(s, r["c_sde_sim"], r["c_sde_se"], sde, ratio, ratio_se))
                + f"; {r['n_diverged']} diverged paths"),
        arrays={"sigma": s, "c_sde_sim": r["c_sde_sim"], "c_sde_se": r["c_sde_se"], "c_sde": sde, "ratio": ratio,
                "ratio_se": ratio_se}, seed=int(r["seed"]),
    )
