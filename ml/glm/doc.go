// Package glm is generalized linear regression as Spark ML's
// GeneralizedLinearRegression: exponential-family responses with a link
// function, fitted by iteratively reweighted least squares (IRLS), with
// Spark's training summary (standard errors, t and p values, dispersion,
// deviance, null deviance, AIC).
//
// # Families and links
//
//	family    variance V(μ)   links (canonical first)     label
//	gaussian  1               identity, log, inverse      any
//	binomial  μ(1−μ)          logit, probit, cloglog      in [0, 1]
//	poisson   μ               log, identity, sqrt         ≥ 0
//	gamma     μ²              inverse, identity, log      > 0
//	tweedie   μ^p             power link η = μ^λ          ≥ 0 (> 0 for p ≥ 2)
//
// Tweedie takes variancePower p (0 or ≥ 1) and linkPower λ (default
// 1 − p; 0 is log); as in Spark, tweedie with p = 0, 1, 2 is the gaussian,
// poisson or gamma family with the power link. A label outside its
// family's domain is an error naming the row.
//
// # IRLS
//
// From the family's starting means μ₀ (Spark's: y; (w·y + ½)/(w + 1) for
// binomial; 0.1 for a zero poisson or tweedie count), each iteration
// forms, for every row, the working response and weight
//
//	z = η − offset + (y − μ)·g′(μ),   W = w / (g′(μ)² V(μ)),
//
// sums XᵀWX and XᵀWz over the rows — over several ranks with one
// all-reduce per iteration, MLlib's treeAggregate — and solves
// (XᵀWX + λΣW·I)β = XᵀWz by Cholesky (ml.CholeskySolve; the intercept is
// not penalized, λ is regParam: Spark's weighted-least-squares objective
// Σ W r²/(2ΣW) + λ/2 ‖β‖²). It stops when no coefficient moves by tol or
// more (Spark's criterion), or after maxIter iterations: then the model is
// the last iterate, Summary.Converged is false and Summary.Warning says so
// (perfectly separated binomial data lands there). Gaussian with the
// identity link is solved once, exactly. A singular design (a duplicate or
// collinear column, a constant one beside the intercept, fewer rows than
// coefficients) is an error wrapping ml.ErrSingular.
//
// # Summary
//
// Standard errors are √(φ · diag (XᵀWX)⁻¹) from the last solve; φ, the
// dispersion, is 1 for binomial and poisson and Pearson's χ² / (n − rank)
// otherwise. p-values are two-sided, normal for binomial and poisson and
// Student's t on n − rank degrees of freedom otherwise. The deviance is
// Σ w·d(y; μ) with the unit deviances of McCullagh and Nelder (table 2.1);
// the null deviance is that of the intercept-only model (refitted by IRLS
// when there is an offset), or of η = offset without an intercept. AIC is
// Spark's: −2 log-likelihood (binomial with round(w) trials, poisson at
// the truncated count, gaussian at σ² = deviance/n, gamma at φ =
// deviance/Σw), + 2 for an estimated dispersion (gaussian, gamma), +
// 2·rank; NaN for tweedie, which has no AIC in Spark.
//
// The tests pin coefficients, standard errors, p-values, deviance, null
// deviance, dispersion and AIC within 1e-6 of statsmodels' GLM for every
// family with its canonical link and binomial-probit, binomial-cloglog,
// poisson-identity, gamma-log and tweedie(1.5)-log, with weights and an
// offset (testdata/peer_statsmodels.py). statsmodels' AIC differs in
// definition for gaussian (by the 2 for the variance) and gamma (its
// dispersion is Pearson's): the script computes Spark's with scipy.
//
// # Differences from Spark
//
//   - IRLS starts from the starting means directly (as R's glm and
//     statsmodels); Spark first fits a weighted least squares of g(μ₀) on
//     the features. Both converge to the same estimate; the iteration count
//     may differ by one.
//   - Gaussian with a log or inverse link starts a non-positive (log) or
//     zero (inverse) response at 0.1, where Spark's start is undefined.
//   - link set for tweedie, and linkPower or variancePower set for another
//     family, are errors (Spark ignores them).
//   - The summary is kept by SaveModel and LoadModel.
//
// # Sources
//
//   - P. McCullagh and J. A. Nelder, Generalized Linear Models, 2nd ed.,
//     Chapman & Hall, 1989: §2.5 (IRLS), §2.3 and table 2.1 (deviance).
//   - Spark ML, generalized linear regression:
//     https://spark.apache.org/docs/latest/ml-classification-regression.html#generalized-linear-regression
//     and GeneralizedLinearRegression.scala (families, links, AIC, summary).
//   - B. Jørgensen, The Theory of Dispersion Models, 1997 (Tweedie family).
package glm
