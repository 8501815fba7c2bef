"""Peer values for ml/decomp's tests: numpy's LAPACK SVD and scikit-learn's
PCA(svd_solver='full') on a small matrix, written to small.csv (40 x 6,
columns scaled 1..6 so that the condition number is about 10). Vectors are
printed with fathom's sign rule (largest-magnitude entry positive).

Run once: /usr/bin/python3 peer_numpy.py > peer_numpy.out
"""
import numpy as np
from sklearn.decomposition import PCA

rng = np.random.default_rng(0)
x = rng.standard_normal((40, 6)) * np.arange(1, 7) + np.array([0, 1, 2, 3, 4, 5])
np.savetxt("small.csv", x, fmt="%.17g", delimiter=",")
x = np.loadtxt("small.csv", delimiter=",")


def fix(v):  # columns of v: largest |entry| positive
    v = v.copy()
    for c in range(v.shape[1]):
        i = np.argmax(np.abs(v[:, c]))
        if v[i, c] < 0:
            v[:, c] = -v[:, c]
    return v


u, s, vt = np.linalg.svd(x, full_matrices=False)
print("svd_s =", repr(s.tolist()))
print("svd_v =", repr(fix(vt.T)[:, :3].ravel().tolist()))
p = PCA(n_components=3, svd_solver="full").fit(x)
print("pca_ratio =", repr(p.explained_variance_ratio_.tolist()))
print("pca_pc =", repr(fix(p.components_.T).ravel().tolist()))
