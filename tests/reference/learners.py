"""Naive references: NCA, MMC, LFDA, MLKR, ITML, LMNN and SDML, written from their definitions."""

import numpy as np


def nca_objective_gradient(X, A, y):
    """NCA objective sum_i sum_{j in C_i} p_ij and its gradient, by explicit loops over pairs.

    The gradient is the textbook ``2 A sum_i (p_i sum_k p_ik x_ik x_ik^T
    - sum_{j in C_i} p_ij x_ij x_ij^T)`` with ``x_ij = x_i - x_j``.
    """
    X = np.asarray(X, dtype=np.float64)
    A = np.asarray(A, dtype=np.float64)
    m, d = X.shape
    Z = X @ A.T
    objective = 0.0
    inner = np.zeros((d, d))
    for i in range(m):
        dist = ((Z[i] - Z) ** 2).sum(axis=1)
        dist[i] = np.inf
        logits = -dist
        p = np.exp(logits - logits.max())
        p /= p.sum()
        same = y == y[i]
        p_i = p[same].sum()
        objective += p_i
        for k in range(m):
            if k == i:
                continue
            diff = X[i] - X[k]
            outer = np.outer(diff, diff)
            inner += p_i * p[k] * outer
            if same[k]:
                inner -= p[k] * outer
    return objective, 2.0 * A @ inner



def mmc_pair_sums(X, pairs, weights, M):
    """Naive sums over index pairs: (sum_k w_k v_k v_k^T, sum_k w_k v_k^2, [v_k^T M v_k])."""
    X = np.asarray(X, dtype=np.float64)
    d = X.shape[1]
    outer = np.zeros((d, d))
    squares = np.zeros(d)
    forms = []
    for (a, b), w in zip(pairs, weights, strict=True):
        v = X[a] - X[b]
        outer += w * np.outer(v, v)
        squares += w * v * v
        forms.append(v @ M @ v)
    return outer, squares, np.array(forms)



def dykstra_psd_halfspace(B, S, level, n_iter=20000):
    """Projection of B onto {A PSD, <S, A> <= level} by Dykstra's alternating projections."""
    A = np.array(B, dtype=np.float64)
    P = np.zeros_like(A)
    Q = np.zeros_like(A)
    norm2 = np.sum(S * S)
    for _ in range(n_iter):
        Y = A + P
        excess = np.sum(S * Y) - level
        H = Y - (excess / norm2) * S if excess > 0 else Y
        P = Y - H
        Y = H + Q
        values, vectors = np.linalg.eigh(0.5 * (Y + Y.T))
        A_new = (vectors * np.maximum(values, 0)) @ vectors.T
        Q = Y - A_new
        if np.abs(A_new - A).max() < 1e-13 * max(1.0, np.abs(A).max()):
            A = A_new
            break
        A = A_new
    return A



def lfda_scatters(X, y, k):
    """LFDA's local scatter matrices straight from Sugiyama's pairwise definition (2007).

    ``S = 1/2 sum_ij W_ij (x_i - x_j)(x_i - x_j)^T`` with, for i and j of one class c of
    size n_c, ``W^w_ij = A_ij / n_c`` and ``W^b_ij = A_ij (1/n - 1/n_c)``, and for other
    pairs ``W^w_ij = 0`` and ``W^b_ij = 1/n``; ``A_ij = exp(-|x_i - x_j|^2 / (s_i s_j))``,
    s_i the distance from x_i to its k-th nearest neighbour in its class (0 when s_i s_j is
    0). Loops over every pair: O(n^2 d^2).
    """
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    Sw = np.zeros((d, d))
    Sb = np.zeros((d, d))
    scale = np.zeros(n)
    size = {c: int(np.sum(y == c)) for c in np.unique(y)}
    for i in range(n):
        same = np.flatnonzero(y == y[i])
        dist = sorted(float(np.sum((X[i] - X[j]) ** 2)) for j in same)
        scale[i] = np.sqrt(dist[min(k, len(same) - 1)])
    for i in range(n):
        for j in range(n):
            diff = X[i] - X[j]
            outer = np.outer(diff, diff)
            if y[i] == y[j]:
                s = scale[i] * scale[j]
                a = np.exp(-np.sum(diff ** 2) / s) if s > 0 else 0.0
                Sw += 0.5 * a / size[y[i]] * outer
                Sb += 0.5 * a * (1.0 / n - 1.0 / size[y[i]]) * outer
            else:
                Sb += 0.5 / n * outer
    return Sb, Sw


def mlkr_loss_gradient(X, A, y):
    """MLKR's loss and gradient by explicit loops over pairs (Weinberger and Tesauro, 2007).

    ``yhat_i = sum_{j != i} p_ij y_j`` with ``p_ij = exp(-d_ij) / sum_{k != i} exp(-d_ik)``,
    ``d_ij = |A (x_i - x_j)|^2``; ``L = sum_i (yhat_i - y_i)^2`` and, by the chain rule,
    ``dL/dA = sum_i 2 (yhat_i - y_i) sum_j y_j dp_ij/dA`` with
    ``dp_ij/dA = -p_ij (dd_ij/dA - sum_k p_ik dd_ik/dA)`` and ``dd_ij/dA = 2 A x_ij x_ij^T``.
    """
    m = X.shape[0]
    loss = 0.0
    grad = np.zeros_like(A)
    for i in range(m):
        d = np.array([np.sum((A @ (X[i] - X[j])) ** 2) if j != i else np.inf
                      for j in range(m)])
        p = np.exp(-(d - d[np.isfinite(d)].min()))
        p /= p.sum()
        y_hat = p @ y
        loss += (y_hat - y[i]) ** 2
        dd = [2 * A @ np.outer(X[i] - X[j], X[i] - X[j]) if j != i else np.zeros_like(A)
              for j in range(m)]
        mean_dd = sum(p[k] * dd[k] for k in range(m))
        dy_hat = sum(y[j] * -p[j] * (dd[j] - mean_dd) for j in range(m))
        grad += 2 * (y_hat - y[i]) * dy_hat
    return loss, grad


def itml_sweep(A, pos_diffs, neg_diffs, pos_bounds, neg_bounds, lambdas, gamma):
    """One ITML sweep, written from Davis et al.'s algorithm as metric-learn 0.7 states it:
    similar pairs first (delta = +1), then dissimilar ones (delta = -1), each a Bregman
    projection; returns the new A (lambdas and bounds change in place)."""
    A = A.copy()
    gamma_proj = 1.0 if np.isinf(gamma) else gamma / (gamma + 1.0)
    n_pos = len(pos_diffs)
    for i, v in enumerate(pos_diffs):
        p = v @ A @ v
        alpha = min(lambdas[i], gamma_proj * (1.0 / p - 1.0 / pos_bounds[i]))
        lambdas[i] -= alpha
        beta = alpha / (1 - alpha * p)
        pos_bounds[i] = 1.0 / (1.0 / pos_bounds[i] + alpha / gamma)
        A = A + beta * np.outer(A @ v, A @ v)
    for i, v in enumerate(neg_diffs):
        p = v @ A @ v
        alpha = min(lambdas[n_pos + i], gamma_proj * (1.0 / neg_bounds[i] - 1.0 / p))
        lambdas[n_pos + i] -= alpha
        beta = -alpha / (1 + alpha * p)
        neg_bounds[i] = 1.0 / (1.0 / neg_bounds[i] - alpha / gamma)
        A = A + beta * np.outer(A @ v, A @ v)
    return A


def lmnn_loss_gradient(X, L, targets, y, reg):
    """metric-learn's LMNN loss, active-triplet count and gradient, written out triplet by
    triplet: ``reg * pull + (1 - reg) * sum [1 + d(a, t) - d(a, b)]_+`` and its subgradient
    ``2 L (reg * sum (x_a - x_t)(x_a - x_t)^T + (1 - reg) * sum_active [(x_a - x_t)(...)^T
    - (x_a - x_b)(...)^T])``."""
    m, d = X.shape
    P = X @ L.T
    dist = ((P[:, None, :] - P[None, :, :]) ** 2).sum(-1)
    pull = np.zeros((d, d))
    hinge = np.zeros((d, d))
    active = 0
    for a in range(m):
        for t in targets[a]:
            v = X[a] - X[t]
            pull += np.outer(v, v)
            for b in range(m):
                if y[b] != y[a] and dist[a, b] < 1.0 + dist[a, t]:
                    active += 1
                    w = X[a] - X[b]
                    hinge += np.outer(v, v) - np.outer(w, w)
    G = L @ (reg * pull + (1.0 - reg) * hinge)
    return 2.0 * G, active * (1.0 - reg) + float(np.sum(G * L)), active


def lmnn_fit(X, y, targets, L, reg, learn_rate, min_iter, max_iter, tol):
    """metric-learn 0.7's LMNN optimiser (step halved until the loss does not increase,
    then grown by 1%) over :func:`lmnn_loss_gradient`; returns ``(L, n_iter)``."""
    G, loss, _ = lmnn_loss_gradient(X, L, targets, y, reg)
    it = 1
    for it in range(2, max_iter):
        while True:
            L_next = L - learn_rate * G
            G_next, loss_next, _ = lmnn_loss_gradient(X, L_next, targets, y, reg)
            delta = loss_next - loss
            if delta <= 0:
                break
            learn_rate /= 2
        L, G, loss = L_next, G_next, loss_next
        learn_rate *= 1.01
        if it > min_iter and abs(delta) < tol:
            break
    return L, it


def sdml_lasso_input(pairs, y, prior_inverse, balance):
    """SDML's graphical-lasso input, one pair at a time: ``P0^{-1} + balance sum_k y_k v_k
    v_k^T`` (Qi et al., 2009, as metric-learn forms it)."""
    S = np.array(prior_inverse, dtype=np.float64)
    for (a, b), label in zip(pairs, y, strict=True):
        v = a - b
        S += balance * label * np.outer(v, v)
    return S


def lsml_fit(quadruplets, w, prior, tol, max_iter):
    """metric-learn's LSML loop, literally: the loss and the gradient summed one violated
    quadruplet at a time (the gradient with its weight), each candidate step decomposed and
    clipped to eigenvalues >= 1e-8, and its loss computed from scratch."""
    vab = quadruplets[:, 0] - quadruplets[:, 1]
    vcd = quadruplets[:, 2] - quadruplets[:, 3]
    prior_inv = np.linalg.inv(prior)

    def loss(M):
        total = np.sum(M * prior_inv) - np.linalg.slogdet(M)[1]
        for k in range(vab.shape[0]):
            dab, dcd = vab[k] @ M @ vab[k], vcd[k] @ M @ vcd[k]
            if dab > dcd:
                total += w[k] * (np.sqrt(dab) - np.sqrt(dcd)) ** 2
        return total

    def gradient(M):
        G = prior_inv - np.linalg.inv(M)
        for k in range(vab.shape[0]):
            dab, dcd = vab[k] @ M @ vab[k], vcd[k] @ M @ vcd[k]
            if dab > dcd:
                G += w[k] * (1 - np.sqrt(dcd / dab)) * np.outer(vab[k], vab[k])
                if dcd > 0:
                    G += w[k] * (1 - np.sqrt(dab / dcd)) * np.outer(vcd[k], vcd[k])
        return G

    M, best, it = prior.copy(), loss(prior), 0
    while it < max_iter:
        it += 1
        G = gradient(M)
        norm = np.linalg.norm(G)
        if norm < tol:
            break
        M_best = None
        for step in np.logspace(-10, 0, 10) / norm:
            values, vectors = np.linalg.eigh(M - step * G)
            candidate = (vectors * np.maximum(values, 1e-8)) @ vectors.T
            current = loss(candidate)
            if current < best:
                best, M_best = current, candidate
        if M_best is None:
            break
        M = M_best
    return M, best, it


def scml_knn_triplets(X, y, k_genuine, k_impostor):
    """metric-learn's ``generate_knntriplets`` from its definition: for each point a (by class,
    then row), each of its k_genuine nearest same-class points g and k_impostor nearest
    other-class points i (distance, then row), the triplet (a, g, i), i varying fastest."""
    out = []
    for c in np.unique(y):
        members, others = np.flatnonzero(y == c), np.flatnonzero(y != c)
        kg, ki = min(k_genuine, members.size - 1), min(k_impostor, others.size)
        for a in members:
            near = [(np.sum((X[a] - X[b]) ** 2), b) for b in members if b != a]
            far = [(np.sum((X[a] - X[b]) ** 2), b) for b in others]
            for _, g in sorted(near)[:kg]:
                for _, i in sorted(far)[:ki]:
                    out.append((a, g, i))
    return np.array(out, dtype=np.int64).reshape(-1, 3)


def scml_weights(X, triplets, basis, draws, beta, gamma, output_iter):
    """metric-learn 0.7's SCML solver, written out with the stored (n_triplets, K) distance
    differences: the best weights judged every output_iter steps, and their objective."""
    a, p, n = (X[triplets[:, j]] @ basis.T for j in range(3))
    D = (a - p) ** 2 - (a - n) ** 2
    w, avg, ada = (np.zeros(basis.shape[0]) for _ in range(3))
    best, best_w = np.inf, None
    for it, idx in enumerate(draws):
        rows = D[idx]
        grad = rows[1 + rows @ w > 0].sum(axis=0) / draws.shape[1]
        avg = (it * avg + grad) / (it + 1)
        ada = np.sqrt(ada ** 2 + grad ** 2)
        w = -(it + 1) / (gamma * (0.001 + ada)) * np.minimum(avg + beta, 0)
        if (it + 1) % output_iter == 0:
            slack = 1 + D @ w
            obj = w.sum() * beta + slack[slack > 0].sum() / D.shape[0]
            if obj < best:
                best, best_w = obj, w
    return best_w, best
