// Package cluster is clustering with Spark ML's shape: KMeans (an
// Estimator) and its KMeansModel, and the ClusteringEvaluator
// (silhouette).
//
// # KMeans
//
// Parameters are Spark's (k, maxIter, tol, seed, initMode, initSteps,
// distanceMeasure, featuresCol, predictionCol) with Spark's defaults;
// two more are fathom's: algorithm ("auto", "lloyd", "hamerly") and
// initialCenters (Spark's initialModel: start from given centers, to
// compare with another implementation from the same start).
//
// Initialization:
//
//   - "k-means||" (Spark's default, Bahmani et al.): one uniform row, then
//     initSteps rounds in which every row becomes a candidate
//     independently with probability 2k·d²(x)/Σd²; the candidates,
//     weighted by the number of rows nearest them, are reduced to k by a
//     weighted k-means++ and up to 30 Lloyd iterations on the candidates
//     (Spark's LocalKMeans).
//   - "k-means++" (Arthur and Vassilvitskii): a uniform row, then each
//     next center a row drawn with probability proportional to d²(x).
//   - "random": k distinct rows drawn uniformly without replacement.
//
// Every draw depends only on the seed and the rows' global indices (rank
// order), never on how the rows are spread over the ranks, so a fit on
// N ranks starts from the single-process centers.
//
// Iterations (Lloyd's): each rank assigns its rows to the nearest center
// and sums them per center; the sums and counts (k·d + k values) are
// all-reduced and each center moves to the mean of its rows (a center
// with no rows stays where it is, as in Spark). The iterations stop after
// maxIter, or after the first one in which no center moved farther than
// tol (Spark's rule). Distances are computed as ‖x‖² − 2x·c + ‖c‖², the
// x·cᵀ of a block of 256 rows by one GEMM (internal/kernel.Dgemm).
//
// Algorithm "hamerly" (the default through "auto") is Hamerly's: each row
// keeps an upper bound on its distance to its center and a lower bound on
// its distance to any other; after the centers move by δ_j the bounds
// move by δ, and only rows whose bounds no longer prove their center the
// nearest (u > max(l, s(a)/2), s(a) the distance from its center to the
// nearest other) get their distances computed, all k by the same GEMM: on
// the block of 256 rows in place when most of it fails, on the failing
// rows gathered otherwise. (Hamerly first tightens u with the one distance
// to the row's own center; on wide rows reading the row from memory is the
// cost of either, so fathom skips that step.) Rows that change center
// update the rank's sums incrementally. It gives Lloyd's assignments (up to exact ties) at a
// fraction of the distance work once the centers settle;
// BenchmarkKMeansFashionMNIST compares the two.
//
// After the last iteration one more pass assigns every row to the final
// centers: TrainingCost (the sum of squared distances, scikit-learn's
// inertia_) and ClusterSizes describe the model as saved, unlike Spark
// whose cost is that of the last assignment before the final move.
//
// The cosine measure normalizes rows (a zero row is an error) and centers
// (the mean of a cluster's unit rows, renormalized, as Spark); between
// unit vectors ‖x − c‖² = 2(1 − cos), so the same Euclidean machinery
// (bounds included) runs, and the cost is Σ(1 − cos).
//
// # Fewer distinct points than k
//
// As Spark: when the data has fewer than k distinct points, the model has
// fewer centers (KMeansModel.K < k) — k-means|| keeps its distinct
// candidates, k-means++ stops when every row sits on a center, random
// keeps the distinct rows. A rank with no rows takes part in every
// collective and contributes nothing; no rows on any rank is an error.
//
// # Sources
//
//   - Spark ML, KMeans: https://spark.apache.org/docs/latest/ml-clustering.html#k-means
//     and KMeans.scala / LocalKMeans.scala (initKMeansParallel, the
//     convergence rule, empty clusters).
//   - B. Bahmani, B. Moseley, A. Vattani, R. Kumar and S. Vassilvitskii,
//     "Scalable K-Means++", VLDB 2012 (k-means||).
//   - D. Arthur and S. Vassilvitskii, "k-means++: The Advantages of
//     Careful Seeding", SODA 2007.
//   - G. Hamerly, "Making k-means even faster", SDM 2010.
//   - P. J. Rousseeuw, "Silhouettes", J. Comput. Appl. Math. 20, 1987;
//     Spark's ClusteringEvaluator for the O(n·k·d) form.
package cluster
