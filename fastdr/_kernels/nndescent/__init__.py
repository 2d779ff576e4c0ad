"""NN-descent: random-projection trees (:mod:`.rp_trees`), heap initialisation from their
leaves (:mod:`.leaves`), the descent rounds (:mod:`.rounds`, the entry) and graph search for
new points (:mod:`.search`).
"""
