"""Peer values for ml/cluster's tests: scikit-learn's KMeans (lloyd, float64)
on blobs.csv (300 x 4, 5 overlapping blobs) from the first 5 rows as the
initial centers, to convergence (tol=0), and the silhouette of its labels.

Run once: /usr/bin/python3 peer_sklearn.py > peer_sklearn.out
"""
import numpy as np
from sklearn.cluster import KMeans
from sklearn.metrics import silhouette_score

rng = np.random.default_rng(1)
centers = rng.standard_normal((5, 4)) * 3
x = centers[rng.integers(0, 5, 300)] + rng.standard_normal((300, 4))
np.savetxt("blobs.csv", x, fmt="%.17g", delimiter=",")
x = np.loadtxt("blobs.csv", delimiter=",")
km = KMeans(5, init=x[:5], n_init=1, max_iter=300, tol=0, algorithm="lloyd").fit(x)
print("inertia =", repr(float(km.inertia_)))
print("n_iter =", km.n_iter_)
print("centers =", repr(km.cluster_centers_.ravel().tolist()))
print("sizes =", np.bincount(km.labels_).tolist())
# silhouette with squared Euclidean distances (Spark's default measure)
print("silhouette_sqeuclidean =", repr(float(silhouette_score(x, km.labels_, metric="sqeuclidean"))))
