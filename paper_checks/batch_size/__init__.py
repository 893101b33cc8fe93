r"""Batch size: the gradient noise scale, the steps--examples trade-off and the learning-rate scaling rules.

One module per paper (registered in the order of the package's modules):

* :mod:`paper_checks.batch_size.noise_scale` -- McCandlish, Kaplan, Amodei 2018: the one-step law
  :math:`\eta_{\rm opt}(B) = \eta_{\max}/(1 + B_{\rm noise}/B)` against Monte Carlo, the steps--examples hyperbola
  on a noisy quadratic and the window of batch sizes where it holds;
* :mod:`paper_checks.batch_size.scaling_rules` -- Malladi, Lyu, Panigrahi, Arora 2022: the linear rule for SGD and
  the square-root rule for sign (Adam at :math:`\beta_1 = \beta_2 = 0`) updates, each with the batch size where it
  stops holding, located in simulation;
* :mod:`paper_checks.batch_size.half_life` -- Marek, Lotfi, Somasundaram, Wilson, Goldblum 2025: Adam's
  :math:`\beta_2` with its half-life held fixed in tokens, against a fixed :math:`\beta_2` and the first-order rule
  :math:`1 - \beta_2 \propto B`, whose range ends where :math:`(1 - \beta_2)B/B_0` is no longer small.

The simulations are the named, cached experiments of :mod:`paper_checks.batch_size.experiments`, shared with
``figures/batch_size.py``; the closed forms are :mod:`theory.batch_size`.
"""
