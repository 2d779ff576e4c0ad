"""Principal component analysis and kernel PCA.

PCA follows the textbook (Zhou, ch. 10.3): centre the data, eigendecompose the covariance
matrix, keep the top d' eigenvectors. Kernel PCA (ch. 10.4) does the same with the centred
kernel matrix of the training samples and projects new samples through kernel sums.
"""

from ._incremental_pca import IncrementalPCA
from ._kernel_pca import KernelPCA
from ._pca import PCA

__all__ = ["IncrementalPCA", "KernelPCA", "PCA"]
