"""Products and matrices for the eigen pipeline: dense block products (:mod:`.block_product`),
the centred Gram product (:mod:`.gram_product`), kernel matrices (:mod:`.kernel_matrix`),
double centring and its inverse (:mod:`.centering`, :mod:`.mds_restore`).
"""
