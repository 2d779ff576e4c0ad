"""Two textbook claims checked with fastdr's neighbour kernels: the 1-NN error tends to a value
between the Bayes error R* and 2 R* (1 - R*) (Cover and Hart), and for uniform data the nearest
to farthest distance ratio tends to 1 as the dimension grows."""

import numpy as np

BAYES_ERROR = 0.10
BAYES_DIM = 2


def _bayes_problem():
    """mu of two unit Gaussians at -mu e1, +mu e1 with R* = Phi(-mu); the exact 1-NN limit."""
    from scipy import integrate, stats

    mu = float(-stats.norm.ppf(BAYES_ERROR))

    def integrand(x):  # 2 eta (1 - eta) p(x), with eta p = phi(x - mu) / 2
        p_pos = 0.5 * stats.norm.pdf(x - mu)
        p_neg = 0.5 * stats.norm.pdf(x + mu)
        total = p_pos + p_neg
        return 2.0 * p_pos * p_neg / total if total > 0 else 0.0

    asymptotic = integrate.quad(integrand, -np.inf, np.inf)[0]
    return mu, asymptotic


def _sample(m, mu, rng):
    y = rng.integers(0, 2, size=m)
    X = rng.standard_normal((m, BAYES_DIM))
    X[:, 0] += np.where(y == 1, mu, -mu)
    return X, y


def nn_vs_bayes(settings):
    """1-NN test error against training size where the Bayes error is known (a dict with the
    curve, the bounds, ``supports_claim`` and ``summary``)."""
    import fastdr

    mu, asymptotic = _bayes_problem()
    rng = np.random.default_rng(0)
    means, stds = [], []
    for m in settings.bayes_m:
        errors = []
        for _ in range(settings.bayes_repeats):  # fresh training and test sets each time
            X, y = _sample(m, mu, rng)
            X_test, y_test = _sample(settings.bayes_test, mu, rng)
            clf = fastdr.KNeighborsClassifier(n_neighbors=1).fit(X, y)
            errors.append(float(np.mean(clf.predict(X_test) != y_test)))
        means.append(float(np.mean(errors)))
        stds.append(float(np.std(errors)))
    bound = 2 * BAYES_ERROR * (1 - BAYES_ERROR)
    stderr = np.sqrt(BAYES_ERROR * (1 - BAYES_ERROR) /
                     (settings.bayes_test * settings.bayes_repeats))
    slack = 3 * stderr + stds[-1]
    supports = bool(BAYES_ERROR - slack <= means[-1] <= bound + slack)
    summary = (f"at m={settings.bayes_m[-1]:,} the 1-NN error is {means[-1]:.4f}; Bayes error "
               f"{BAYES_ERROR:.4f}, Cover-Hart bound 2R*(1-R*) = {bound:.4f}, exact asymptotic "
               f"1-NN error {asymptotic:.4f}: "
               + ("between the two, as claimed" if supports else "OUTSIDE the bounds"))
    return {"m": list(settings.bayes_m), "error_mean": means, "error_std": stds,
            "bayes_error": BAYES_ERROR, "cover_hart_bound": bound,
            "asymptotic_nn_error": asymptotic, "dimension": BAYES_DIM,
            "n_test": settings.bayes_test, "repeats": settings.bayes_repeats,
            "supports_claim": supports, "summary": summary}


def distance_concentration(settings):
    """Nearest / farthest distance ratio of uniform data against d (a dict with the ratios,
    the relative contrast and its log-log slope, ``supports_claim`` and ``summary``)."""
    import fastdr
    from bench.engine import fit_loglog_slope

    rng = np.random.default_rng(1)
    ratio_mean, ratio_p10, ratio_p90, contrast = [], [], [], []
    for d in settings.curse_d:
        X = rng.random((settings.curse_m, d))
        Q = rng.random((settings.curse_queries, d))
        D = fastdr.pairwise_distances(Q, X)
        near, far = D.min(axis=1), D.max(axis=1)
        ratio = near / far
        ratio_mean.append(float(ratio.mean()))
        ratio_p10.append(float(np.quantile(ratio, 0.1)))
        ratio_p90.append(float(np.quantile(ratio, 0.9)))
        contrast.append(float(((far - near) / near).mean()))
    large = [(d, c) for d, c in zip(settings.curse_d, contrast, strict=True) if d >= 10]
    slope = fit_loglog_slope([d for d, _ in large], [c for _, c in large])
    increasing = all(b >= a - 0.02 for a, b in zip(ratio_mean, ratio_mean[1:], strict=False))
    supports = bool(increasing and ratio_mean[-1] > ratio_mean[0])
    summary = (f"the mean nearest/farthest ratio grows from {ratio_mean[0]:.3f} at d="
               f"{settings.curse_d[0]} to {ratio_mean[-1]:.3f} at d={settings.curse_d[-1]}"
               + (f"; relative contrast falls with log-log slope {slope:.2f} (theory -0.5)"
                  if slope is not None else "")
               + ("; towards 1, as claimed" if supports else "; NOT monotone towards 1"))
    return {"d": list(settings.curse_d), "m": settings.curse_m,
            "queries": settings.curse_queries, "ratio_mean": ratio_mean,
            "ratio_p10": ratio_p10, "ratio_p90": ratio_p90, "contrast_mean": contrast,
            "contrast_slope": slope, "supports_claim": supports, "summary": summary}
