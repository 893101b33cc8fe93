r"""Step-size practice on noisy quadratics: one module per paper.

* :mod:`paper_checks.noisy_quadratic.schedules` -- Wen et al. 2024 (WSD plateau and decay), Bergsma et al.
  2025 (linear decay to zero vs cosine), Defazio et al. 2023 (last-iterate bound for any schedule);
* :mod:`paper_checks.noisy_quadratic.merging` -- Tian et al. 2025 (checkpoint merging as decay, the inverse map for
  cosine, linear and 1 - sqrt decays);
* :mod:`paper_checks.noisy_quadratic.averaging` -- Morales-Brotons et al. 2024 (EMA of weights, and the EMA of a
  constant step against a decay), and steplab's momentum stationary variances;
* :mod:`paper_checks.noisy_quadratic.momentum` -- Kidambi et al. 2018 (tuned heavy ball no faster than SGD under
  sampled gradients, ASGD faster), on exact mean-square rates (:mod:`theory.noisy_quadratic_sampled`);
* :mod:`paper_checks.noisy_quadratic.weight_decay` -- Kosson et al. 2023 (rotational equilibrium), Wang & Aitchison
  2024 (AdamW's weights as a moving average: the EMA timescale as a fraction of training);
* :mod:`paper_checks.noisy_quadratic.lion` -- Chen et al. 2023 (Lion solves a box-constrained problem).
* :mod:`paper_checks.noisy_quadratic.river` -- Wen et al. 2024 (a river valley: progress along the river is the area
  under the schedule; a stable phase then a decay beats an early decay; WSD-S keeps its decays' progress).

The simulations are the experiments of :mod:`paper_checks.noisy_quadratic.experiments`, on the shared
noisy quadratic model (:mod:`theory.nqm`, :mod:`sims.nqm`).
"""
