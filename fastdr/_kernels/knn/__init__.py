"""Exact k-NN: heap selection and radius search (:mod:`.brute`, the entry), the certified
float32 screen with exact refinement (:mod:`.screen`), and neighbour votes (:mod:`.vote`).
"""
