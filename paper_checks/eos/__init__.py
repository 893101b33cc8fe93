r"""The edge of stability on exactly solvable models: one module per paper.

* :mod:`paper_checks.eos.selfstab` -- Damian, Nichani, Lee (self-stabilization): the toy's equilibrium and
  the window of step sizes where it holds;
* :mod:`paper_checks.eos.constrained` -- Damian, Nichani, Lee: GD's window-averaged iterate follows the
  constrained trajectory (projected gradient flow onto :math:`\{S \le 2/\eta\}`) on a 40-parameter network;
* :mod:`paper_checks.eos.central_flow` -- Cohen et al. 2025 (central flows): the transient on the toy and the
  predicted time-averaged loss of a tiny network;
* :mod:`paper_checks.eos.edge_of_stability` -- Cohen et al. 2021: sharpness pinned at :math:`2/\eta`;
* :mod:`paper_checks.eos.momentum` -- Cohen et al. 2022: the momentum thresholds;
* :mod:`paper_checks.eos.catapult` -- Lewkowycz et al. 2020: the catapult phases of the uv model;
* :mod:`paper_checks.eos.rod_flow` -- Regis & Chewi 2026: rod flow against the central flow and GD;
* :mod:`paper_checks.eos.crosslinks` -- links to other topics: the rod flow on logistic data settles on the
  logistic topic's GD 2-cycles, and the linear-Hessian spectrum gives a linear net's :math:`2/\eta` crossing step
  (both declare ``uses=`` so that edits to those topics recompute them).

The simulations are the experiments of :mod:`paper_checks.eos.experiments` (cached, budgeted, read by
the claims and by ``figures/eos.py``).
"""
