"""Neighbour graphs: CSR assembly and renumbering (:mod:`.build`) and shortest paths,
Dijkstra per source and blocked Floyd-Warshall (:mod:`.shortest_paths`, the entry).
"""
