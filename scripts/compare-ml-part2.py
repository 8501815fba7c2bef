"""The scikit-learn side of scripts/compare-ml-part2.sh: k-means and PCA on
Fashion-MNIST (60 000 x 784, pixels/255, float32 as job5_sklearn.py).

  kmeans_init   KMeans(10, init=C0, n_init=1, max_iter=100, algorithm='lloyd'),
                C0 = kmeans_plusplus(X, 10, random_state=0) (the centers that
                job5's KMeans(random_state=0) starts from), written to
                --centers for fathom to start from the same place
  kmeans        job5's KMeans(10, n_init=1, max_iter=100, lloyd, random_state=0)
                (k-means++ init included in the time)
  kmeans_seeds  the same for random_state 0..4: inertia only
  pca_rand      PCA(50, svd_solver='randomized', random_state=0)
  pca_full      PCA(50, svd_solver='full')

Prints one JSON object. Times: median of --repeats fits (fit() wall time).
Usage: OPENBLAS_CORETYPE=Cooperlake /usr/bin/python3 compare-ml-part2.py \
          --anchors DIR --centers FILE [--repeats 3] [--only kmeans_init,...]
"""
import argparse
import json
import statistics
import sys
import time

import numpy as np


def timed(make, x, repeats):
    secs, est = [], None
    for _ in range(repeats):
        est = make()
        t = time.perf_counter()
        est.fit(x)
        secs.append(time.perf_counter() - t)
    return statistics.median(secs), secs, est


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--anchors", required=True)
    p.add_argument("--centers", required=True)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--only", default="kmeans_init,kmeans,kmeans_seeds,pca_rand,pca_full")
    a = p.parse_args()
    sys.path.insert(0, a.anchors)
    import common
    from sklearn.cluster import KMeans, kmeans_plusplus
    from sklearn.decomposition import PCA

    x = common.load_fashion_mnist()[0]
    only = a.only.split(",")
    out = {"n": int(x.shape[0]), "d": int(x.shape[1])}
    if "kmeans_init" in only or "kmeans" in only:
        c0, _ = kmeans_plusplus(x, 10, random_state=0)
        np.savetxt(a.centers, c0.astype(np.float64), fmt="%.9g", delimiter=",")
    if "kmeans_init" in only:
        sec, secs, est = timed(lambda: KMeans(10, init=c0, n_init=1, max_iter=100, algorithm="lloyd"), x, a.repeats)
        out["kmeans_init"] = {"sec": sec, "secs": secs, "inertia": float(est.inertia_), "n_iter": int(est.n_iter_)}
    if "kmeans" in only:
        sec, secs, est = timed(lambda: KMeans(10, n_init=1, max_iter=100, algorithm="lloyd", random_state=0), x, a.repeats)
        same = bool(np.allclose(KMeans(10, init=c0, n_init=1, max_iter=1, algorithm="lloyd").fit(x).cluster_centers_,
                                KMeans(10, n_init=1, max_iter=1, algorithm="lloyd", random_state=0).fit(x).cluster_centers_))
        out["kmeans"] = {"sec": sec, "secs": secs, "inertia": float(est.inertia_), "n_iter": int(est.n_iter_),
                         "init_is_kmeans_plusplus_rs0": same}
    if "kmeans_seeds" in only:
        out["kmeans_seeds"] = [float(KMeans(10, n_init=1, max_iter=100, algorithm="lloyd", random_state=s).fit(x).inertia_)
                               for s in range(5)]
    for name, solver in (("pca_rand", "randomized"), ("pca_full", "full")):
        if name in only:
            kw = {"random_state": 0} if solver == "randomized" else {}
            sec, secs, est = timed(lambda: PCA(50, svd_solver=solver, **kw), x, a.repeats)
            out[name] = {"sec": sec, "secs": secs,
                         "explained_variance_ratio_sum": float(est.explained_variance_ratio_.sum()),
                         "explained_variance_ratio": [float(v) for v in est.explained_variance_ratio_]}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
