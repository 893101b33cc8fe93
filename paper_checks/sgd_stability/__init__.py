r"""Linear stability of SGD: batch size, delayed gradients, momentum (topic ``sgd_stability``).

One module per source, each with its ``PAPER``:

* :mod:`paper_checks.sgd_stability.mulayoff2024` -- the exact mean-square threshold :math:`\eta^*(B)` of linearized SGD
  (batches without replacement), the mixture identity behind it, the larger almost-sure threshold,
  the naive Monte Carlo trap, and how the stable set of minima shrinks as the batch falls;
* :mod:`paper_checks.sgd_stability.mulayoff2024_conditions` -- how close the threshold is to gradient descent's at
  moderate batch sizes (:math:`n = 512`), and the paper's two simple necessary conditions;
* :mod:`paper_checks.sgd_stability.mulayoff2024_covariance` -- at a non-interpolating minimum: the limit of the second
  moment, :math:`\mathrm{vec}\,\Sigma_\infty = \eta p(2C - \eta D)^\dagger\mathrm{vec}\,\Sigma_g`, and its existence
  exactly below :math:`\eta^*(B)`;
* :mod:`paper_checks.sgd_stability.wusu2023` -- the trace bound :math:`\mathrm{tr}\,H \le 2/\eta` at :math:`B = 1` on a diagonal linear net;
* :mod:`paper_checks.sgd_stability.levinmay1976` -- stability of :math:`x_{t+1} = x_t - \eta a\,x_{t-S}` (delayed gradients), and the
  tightening of the threshold under noise on a nonlinear toy;
* :mod:`paper_checks.sgd_stability.polyak1964` -- heavy-ball and Nesterov stability regions and the heavy-ball stationary variance.

The simulations are the named, cached experiments of :mod:`paper_checks.sgd_stability.experiments`, shared with
``figures/sgd_stability.py``.
"""
