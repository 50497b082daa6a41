"""What the cross-checks compare against: the reference libraries, imported or skipped, and
dpsql's accounting events translated into their terms.

Every test module calls :func:`opendp` or :func:`dp_accounting` at import, so without the
``reference`` extra the module is skipped with a reason that says how to install it.
"""

from __future__ import annotations

import math
from types import ModuleType

import numpy as np
import pytest
from scipy.special import logsumexp

from dpsql.accounting.composition import MechanismEvent

INSTALL = "install the reference libraries: pip install 'dpsql[reference]'"


def opendp() -> ModuleType:
    """``opendp.prelude`` with the contrib features on, or skip the calling module."""
    prelude = pytest.importorskip("opendp.prelude", reason=f"OpenDP is not installed; {INSTALL}")
    prelude.enable_features("contrib")
    return prelude


def dp_accounting() -> ModuleType:
    """Google's ``dp_accounting``, or skip the calling module."""
    return pytest.importorskip("dp_accounting",
                               reason=f"dp-accounting is not installed; {INSTALL}")


def reference_pld(events: list[MechanismEvent]):
    """The history as one dp-accounting PrivacyLossDistribution (pessimistic estimates).

    laplace(ε) with steps=1 stands for any ε-DP mechanism: the (ε, 0) dominating pair
    (``from_privacy_parameters``); steps=Δ is discrete Laplace of parameter ε/Δ moved by Δ;
    steps=None continuous Laplace of scale 1/ε.  A discrete Gaussian is the library's one-cell
    discrete Gaussian with σ = the noise multiplier and sensitivity 1: one configuration of the
    many that dpsql's event covers, so it gives a lower bound on what dpsql must report.
    """
    pld = dp_accounting().pld.privacy_loss_distribution
    params = dp_accounting().pld.common.DifferentialPrivacyParameters
    total = None
    for event in events:
        if event.kind == "laplace" and event.steps == 1:
            loss = pld.from_privacy_parameters(params(event.epsilon, 0.0))
        elif event.kind == "laplace" and event.steps is None:
            loss = pld.from_laplace_mechanism(1 / event.epsilon)
        elif event.kind == "laplace":
            loss = pld.from_discrete_laplace_mechanism(event.epsilon / event.steps,
                                                       sensitivity=event.steps)
        elif event.kind == "gaussian" and event.discrete:
            loss = pld.from_discrete_gaussian_mechanism(event.noise_multiplier)
        elif event.kind == "gaussian":
            loss = pld.from_gaussian_mechanism(event.noise_multiplier)
        else:
            loss = pld.from_privacy_parameters(params(event.epsilon, event.delta))
        total = loss if total is None else total.compose(loss)
    return total


ORDERS = np.concatenate([1 + np.geomspace(1e-3, 1.0, 400), np.geomspace(2.0, 1e4, 2000)])
"""Rényi orders for dp-accounting's RDP accountant: fine enough that its ε (a minimum over this
grid) is within ~1e-4 relative of the minimum over all α > 1 that dpsql takes."""


def reference_zcdp_epsilon(events: list[MechanismEvent], delta: float) -> float:
    """ε at ``delta`` by dp-accounting's RDP accountant, for the history as dpsql's zCDP sees it:
    each Gaussian its own GaussianDpEvent (RDP α/2m², exactly ρα), each pure ε-DP event a
    ZCDpEvent(ε²/2) (Bun & Steinke Prop. 1.4), approximate events' δ taken off and ε added."""
    lib = dp_accounting()
    accountant = lib.rdp.RdpAccountant(orders=ORDERS.tolist())
    extra_eps = extra_delta = 0.0
    for event in events:
        if event.kind == "gaussian":
            accountant.compose(lib.GaussianDpEvent(event.noise_multiplier))
        elif event.kind == "laplace":
            accountant.compose(lib.ZCDpEvent(event.epsilon**2 / 2))
        else:
            extra_eps += event.epsilon
            extra_delta += event.delta
    return accountant.get_epsilon(delta - extra_delta) + extra_eps


def discrete_gaussian_pmf(sigma: float, support: np.ndarray) -> np.ndarray:
    """P(X = x) ∝ exp(−x²/2σ²) on ``support``, normalised over ±(40σ + 2)."""
    width = math.ceil(40 * sigma) + 2
    z = np.arange(-width, width + 1, dtype=float)
    log_norm = logsumexp(-(z * z) / (2 * sigma * sigma))
    return np.exp(-(support.astype(float) ** 2) / (2 * sigma * sigma) - log_norm)


def discrete_laplace_pmf(scale: float, support: np.ndarray) -> np.ndarray:
    """P(X = x) = (1 − p)/(1 + p)·p^|x| with p = e^{−1/scale}."""
    p = math.exp(-1 / scale)
    return (1 - p) / (1 + p) * p ** np.abs(support.astype(float))
