"""Every check that runs before a kernel or scipy reads user input.

One module per topic; import from the module that holds the check:

- :mod:`.arrays`: arrays and targets (dtype, shape, finiteness, fitted state, queries);
- :mod:`.params`: declarative parameter constraints and scalar, option and seed checks;
- :mod:`.feature_names`: pandas column names, recorded in ``fit`` and checked afterwards;
- :mod:`.budget`: the memory budget, consulted before any large dense allocation;
- :mod:`.matrices`: square user matrices (precomputed distances or kernels);
- :mod:`.magnitudes`: values whose squared distances would overflow or underflow;
- :mod:`.indices`: neighbour indices from trees and heaps, and user-supplied sparse graphs.
"""
