"""Bad-input rows of :mod:`theory.noisy_quadratic_fit` (the overlay's fit; see tests/_bad_input_table.py)."""
from __future__ import annotations

import numpy as np

from tests._bad_input_table import Row

_F = "theory.noisy_quadratic_fit."
_STEP = np.arange(0, 40, 2)                       # 20 rows: more than the 4 parameters
_LOSS = 0.1 + 1.0 / (1.0 + _STEP)

ROWS = [
    Row(_F + "fit_log", {"step": _STEP, "lr": np.full(_STEP.size, 0.1), "loss": _LOSS, "n_modes": 8},
        kinds={"step": "iarr", "lr": "nonnegarr", "loss": "posarr", "n_modes": "posint"}, slow=True),
    Row(_F + "noise_level", {"step": _STEP.astype(float), "loss": _LOSS}, kinds={"step": "arr", "loss": "posarr"}),
]
