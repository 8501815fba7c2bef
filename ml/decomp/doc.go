// Package decomp is matrix decomposition with Spark ML's shape: PCA (an
// Estimator whose PCAModel projects rows on the top k principal
// components) and ComputeSVD, the truncated SVD of a distributed row
// matrix (Spark's RowMatrix.computeSVD).
//
// # Solvers
//
// Both reduce to the top k eigenpairs of a Gramian XᵀX (for PCA, of the
// rows centered on the column means, all-reduced first):
//
//   - "gramian" (exact): each rank computes XᵀX of its rows through
//     internal/kernel.Dgemm — for PCA, reading the frame's float32 or
//     float64 values in place: one pass of column sums (which also proves
//     every value finite), one pass that centers and transposes, and the
//     lower triangle in four row panels of GEMMs (5/8 of the full
//     product); the d × d matrices are all-reduced and every rank solves
//     the same symmetric eigenproblem — with gonum's
//     EigenSym when d ≤ 256 or k > d/4, otherwise by block subspace
//     iteration with Rayleigh–Ritz on the formed matrix (a block of
//     2k + 16 vectors, orthonormalized by CholeskyQR2, iterated until the
//     top k Ritz values change by less than 1e-13 of the largest), which
//     reaches the same eigenpairs to rounding at a fraction of a full
//     eigendecomposition's cost for wide matrices. The Gramian costs n·d²
//     flops and 8·d² bytes.
//   - "randomized" (Halko, Martinsson and Tropp): XᵀX is never formed; a
//     block of k + 10 random vectors goes through 7 power iterations,
//     each two GEMMs over the rows, Xᵀ(XQ), all-reduced (d × (k+10)
//     values), then a Rayleigh–Ritz step. Approximate, as scikit-learn's
//     svd_solver='randomized' (the same oversampling and iterations).
//   - "auto" (default): "gramian" up to 4096 columns, "randomized" above.
//
// The random start is seeded by the shape alone, so every rank, and
// every run, gets the same vectors.
//
// # Signs
//
// An eigenvector's sign is arbitrary; fathom fixes it deterministically:
// each principal component and each right singular vector (a column of
// PC or V) has its largest-magnitude entry positive (the first of equal
// magnitudes). U = X·V·diag(1/S) follows V. scikit-learn's svd_flip uses
// the same rule on U (the left vectors), so compare components up to sign.
//
// # PCA
//
// As Spark's PCA: inputCol, outputCol and k; the model's explained
// variance is the fraction of the total variance (the trace of the
// covariance, computed exactly) each component keeps — scikit-learn's
// explained_variance_ratio_. Transform computes x·PC without centering
// (Spark's choice; scikit-learn subtracts the mean first). A constant
// column has zero variance: it adds nothing to the trace and gets zero
// loadings (documented behaviour, tested); when every column is constant
// Fit fails, there being no variance to explain. k larger than the width
// is an error; a rank with no rows contributes nothing.
//
// # SVD
//
// σᵢ = √λᵢ(XᵀX), V the eigenvectors, U = X·V·diag(1/σ) for each rank's
// rows on request. As Spark, singular values below rCond·σ₁ (1e-9) are
// dropped, so fewer than k may come back. Through the Gramian the
// relative error of σᵢ is about ε·(σ₁/σᵢ)²: exact to 1e-8 for condition
// numbers up to ~10³ (the test pins numpy's LAPACK values to 1e-8 on such
// a matrix, testdata/peer_numpy.py).
//
// # Sources
//
//   - Spark ML, PCA: https://spark.apache.org/docs/latest/ml-features.html#pca;
//     Spark MLlib, RowMatrix.computeSVD and computePrincipalComponentsAndExplainedVariance:
//     https://spark.apache.org/docs/latest/mllib-dimensionality-reduction.html
//   - N. Halko, P.-G. Martinsson and J. A. Tropp, "Finding Structure with
//     Randomness: Probabilistic Algorithms for Constructing Approximate
//     Matrix Decompositions", SIAM Review 53(2), 2011 (Algorithms 4.4
//     and 5.3).
//   - Y. Saad, Numerical Methods for Large Eigenvalue Problems, 2nd ed.,
//     SIAM 2011, ch. 5 (subspace iteration, Rayleigh–Ritz).
//   - T. Fukaya, Y. Nakatsukasa, Y. Yanagisawa and Y. Yamamoto,
//     "CholeskyQR2: A Simple and Communication-Avoiding Algorithm for
//     Computing a Tall-Skinny QR Factorization", ScalA 2014.
package decomp
