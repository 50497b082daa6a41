"""Mechanisms: pure maths on numpy (and scipy off the query path, :mod:`.special` says
where) — calibration, exact samplers, noise, selection.

No SQL and no backend here (never import sqlglot or duckdb).

>>> plan = choose_noise([Sensitivity("n", 1.0, 1.0, 1.0, integer=True)], 1.0, 0.0)
>>> str(plan.noise_for(plan.sensitivities[0]))
'discrete laplace(t=1, grid=1)'
"""

from dpsql.mechanisms.calibration import (
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    gaussian_log_delta,
    gaussian_zcdp_rho,
    laplace_scale,
    validate_privacy,
)
from dpsql.mechanisms.chooser import NoisePlan, Sensitivity, choose_noise
from dpsql.mechanisms.discrete_calibration import discrete_gaussian_sigma, zcdp_log_delta
from dpsql.mechanisms.noise import Noise, grid_granularity
from dpsql.mechanisms.samplers import Sampler
from dpsql.mechanisms.selection import release_probability, selection_threshold, split_delta

__all__ = [
    "Noise",
    "NoisePlan",
    "Sampler",
    "Sensitivity",
    "analytic_gaussian_sigma",
    "choose_noise",
    "classic_gaussian_sigma",
    "discrete_gaussian_sigma",
    "gaussian_log_delta",
    "gaussian_zcdp_rho",
    "grid_granularity",
    "laplace_scale",
    "release_probability",
    "selection_threshold",
    "split_delta",
    "validate_privacy",
    "zcdp_log_delta",
]
