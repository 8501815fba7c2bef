// Package linear is the linear family of fathom's classic machine learning,
// with Spark ML's parameters and behaviour: LinearRegression,
// LogisticRegression (binomial and multinomial) and LinearSVC (binary, as
// Spark's, and one-vs-rest for more classes, as scikit-learn's).
//
// # Objectives
//
// Every model minimizes an average loss plus Spark's elastic-net penalty,
//
//	1/W Σ w_i ℓ(β·x_i + b, y_i) + λ(α‖β‖₁ + (1−α)/2 ‖β‖²),   W = Σ w_i,
//
// with λ = regParam and α = elasticNetParam; intercepts are never
// penalized. ℓ is ½(m − y)² for LinearRegression (so the objective is
// exactly Spark's documented 1/(2n) Σ w (y − xβ)² + ...), the log loss for
// LogisticRegression (softmax over one coefficient vector per class, no
// reference class, for the multinomial family) and the hinge or squared
// hinge loss for LinearSVC. With standardization=true the penalty applies
// to the coefficients of the features scaled to unit standard deviation
// (the fitted coefficients are reported in the original space), as in
// Spark; with standardization=false it is scikit-learn's objective:
// LogisticRegression(C) and LinearSVC(C) are λ = 1/(C·n), Ridge(alpha) is
// λ = alpha/n, ElasticNet(alpha, l1_ratio) is λ = alpha, α = l1_ratio.
//
// # The optimization core
//
// One Aggregator (Spark's ml.optim.aggregator, written once) computes a
// loss and its gradient over the rows of every rank: two GEMMs per row
// block on fathom's kernel.Dgemm (the margins X·Wᵀ, then Rᵀ·X), the blocks
// spread over the cores, and one all-reduce of [loss, gradient, weight
// sum] per evaluation — MLlib's treeAggregate. Feature means and standard
// deviations are computed the same way. L-BFGS (optim.MinimizeLBFGS)
// minimizes smooth objectives and OWL-QN (optim.MinimizeOWLQN) those with
// an L1 part; LinearRegression also solves the normal equations by
// Cholesky (ml.CholeskySolve) when there is no L1 part.
//
// With standardization the solver works on the scaled (and, with an
// intercept, centred) features, as Spark's; without it, on the features
// as given — centring only those whose mean is far from zero against their
// spread — as scikit-learn's, so that a fixed iteration budget follows a
// comparable path. The minimizer is the same either way.
//
// Every rank ends with the same model. A converged fit equals the
// single-process one up to the rounding of differently ordered sums
// (within 1e-9 in the conformance tests); a fit stopped by maxIter before
// it converged agrees only as far as it converged, since the rounding
// steers the path. The sums are cut into chunks by the data's shape, not
// by the number of cores, so one process gives the same model on any
// machine with the same kernels.
//
// # Sources
//
//   - Spark ML documentation, "Classification and regression": linear
//     regression, logistic regression (binomial and multinomial), linear
//     support vector machine; their objectives, standardization, the
//     constant-label behaviour and the centring of multinomial
//     coefficients (spark.apache.org/docs/latest/ml-classification-regression.html).
//   - G. Andrew and J. Gao, "Scalable Training of L1-Regularized
//     Log-Linear Models", ICML 2007 (OWL-QN).
//   - J. Nocedal and S. Wright, Numerical Optimization, 2nd ed., Springer
//     2006 (L-BFGS, Algorithm 7.4; line searches, chapter 3).
//   - J. Friedman, T. Hastie and R. Tibshirani, "Regularization Paths for
//     Generalized Linear Models via Coordinate Descent", J. Stat. Softw.
//     33(1), 2010 (the elastic net and its standardization, as glmnet and
//     Spark use them).
//   - R.-E. Fan et al., "LIBLINEAR: A Library for Large Linear
//     Classification", JMLR 9, 2008 (the squared-hinge primal that
//     scikit-learn's LinearSVC solves).
//
// # Example
//
//	e := linear.NewLogisticRegression()
//	e.RegParam = 0.01
//	m, err := e.Fit(ml.Local(frame)) // frame: "features" vector, "label" 0..K−1
//	out, err := m.Transform(frame)   // + rawPrediction, probability, prediction
package linear
