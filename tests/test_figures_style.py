import numpy as np

from figures import _style


def _draw(out, name):
    fig, ax = _style.figure()
    x = np.linspace(0, 1, 50)
    ax.plot(x, x**2, color=_style.THEORY, label="theory")
    ax.plot(x[::5], x[::5] ** 2, "o", color=_style.SIM, label="simulation")
    _style.threshold(ax, 0.5, "2/λ")
    ax.legend()
    return _style.save(fig, name, out)


def test_figures_are_byte_stable(tmp_path):
    first = [p.read_bytes() for p in _draw(tmp_path / "a", "demo")]
    second = [p.read_bytes() for p in _draw(tmp_path / "b", "demo")]
    assert first == second
