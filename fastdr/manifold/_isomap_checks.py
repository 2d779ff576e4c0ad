"""The size checks of Isomap, shared by :class:`fastdr.Isomap` and :class:`fastdr.dask.Isomap`.

Each refuses a count that the data cannot support, with the value received and the largest
one allowed.
"""


def check_n_neighbors(n_neighbors, n_samples):
    """Refuse a k-NN graph of ``n_neighbors >= n_samples`` (a point is not its own neighbour).

    Parameters
    ----------
    n_neighbors : int or None
        None (an epsilon graph) passes.
    n_samples : int

    Raises
    ------
    ValueError
        Naming the largest ``n_neighbors`` allowed.
    """
    if n_neighbors is not None and n_neighbors >= n_samples:
        raise ValueError(
            f"n_neighbors={n_neighbors} must be smaller than the number of samples "
            f"({n_samples}): a point is not its own neighbour. Use n_neighbors <= "
            f"{n_samples - 1}."
        )


def check_embedding_size(n_components, n_points, n_landmarks=None):
    """Refuse more landmarks than points, or more components than the eigenproblem has rows.

    Parameters
    ----------
    n_components : int
    n_points : int
        The points embedded (those kept after the connected-components policy).
    n_landmarks : int or None
        With landmarks, the eigenproblem is the L x L landmark block.

    Raises
    ------
    ValueError
        Naming the limit and the largest value allowed.
    """
    limit, what = n_points, f"the number of embedded points ({n_points})"
    if n_landmarks is not None:
        if n_landmarks > n_points:
            raise ValueError(
                f"n_landmarks={n_landmarks} is larger than the number of embedded "
                f"points ({n_points}). Use n_landmarks <= {n_points}."
            )
        limit, what = n_landmarks, f"n_landmarks ({n_landmarks})"
    if n_components > limit:
        raise ValueError(
            f"n_components={n_components} is larger than {what}. "
            f"Use n_components <= {limit}."
        )
