"""Objective and gradient kernels of the learners: NCA (:mod:`.nca`), MMC (:mod:`.mmc`) and
the per-class statistics of LDA (:mod:`.class_stats`).
"""
