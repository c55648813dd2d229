"""An L2-penalised logistic regression fitted by Newton's method (numpy only), on standardised
features: what the fitted gates and the list membership model are (`Logistic` reads its dict).

Example: fit_logistic(np.array([[0.], [1.]]), np.array([0., 1.])) -> {"mean": [0.5], ...}
"""

from __future__ import annotations

import numpy as np

L2 = 1.0


def fit_logistic(X: np.ndarray, y: np.ndarray, l2: float = L2, iters: int = 60) -> dict:
    """Standardise X, then Newton steps on the L2-penalised log-loss (bias unpenalised)."""
    mean, scale = X.mean(0), X.std(0)
    scale = np.where(scale > 1e-9, scale, 1.0)
    Z = np.c_[(X - mean) / scale, np.ones(len(X))]
    w = np.zeros(Z.shape[1])
    penalty = l2 * np.r_[np.ones(Z.shape[1] - 1), 0.0]
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-Z @ w))
        grad = Z.T @ (p - y) + penalty * w
        hess = (Z * (p * (1 - p))[:, None]).T @ Z + np.diag(penalty)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return {"mean": mean.tolist(), "scale": scale.tolist(), "coef": w[:-1].tolist(),
            "bias": float(w[-1])}

