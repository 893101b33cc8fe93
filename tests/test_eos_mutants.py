"""Edge-of-stability tests that kill mutants the topic's other tests let through (see tests/mutation.py).

Each test pins one quantity exactly, with the reason the expected value holds written beside it.
They reuse the compiled programs of tests/contract_eos.py (same static configurations).
"""
from __future__ import annotations

import numpy as np

from tests.contract_eos import _catapult


def test_catapult_initial_loss_is_the_first_recorded_loss():
    r"""``loss0`` = :math:`\tfrac12 f_0^2`. At :math:`\eta\lambda_0 = 0.5` the output contracts every step
    (:math:`f_{t+1} \approx (1 - \eta\lambda_t) f_t` with :math:`\eta\lambda_t \le 0.5 + O(f^2/m)`), so the
    largest loss of the first block is the loss at step 0, which must equal ``loss0``."""
    out = _catapult(eta_lambda0=(0.5,))
    np.testing.assert_allclose(out["loss0"], out["block_max_loss"][..., 0], rtol=1e-12)
    assert np.all(out["block_loss"][..., -1] < out["loss0"])
