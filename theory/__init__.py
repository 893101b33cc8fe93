"""Closed-form derivations, one module per topic.

Pure mathematics: sympy for the derivations, numpy/scipy where a closed form needs a
numerical root or eigenvalue. No JAX state, no I/O beyond shipped data, no plotting.
"""
