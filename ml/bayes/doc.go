// Package bayes is naive Bayes classification as Spark ML's NaiveBayes:
// multinomial (the default), Bernoulli, Gaussian and complement models,
// fitted in one pass over the data and, over several ranks, one collective
// of the per-class statistics (after a small all-reduce that agrees on the
// number of classes and the width).
//
// # Models
//
// With class weights n_c (row counts, or sums of weightCol), n = Σ n_c,
// K classes, d features, per-class feature sums s_cj and smoothing λ
// (Spark's formulas, NaiveBayes.scala):
//
//	multinomial  pi_c = log((n_c + λ) / (n + Kλ))
//	             theta_cj = log((s_cj + λ) / (Σ_j s_cj + dλ))
//	             raw_c = pi_c + theta_c · x
//	bernoulli    theta_cj = log((s_cj + λ) / (n_c + 2λ)), features 0 or 1
//	             raw_c = pi_c + Σ_j [x_j theta_cj + (1 − x_j) log(1 − exp theta_cj)]
//	complement   t_cj = Σ_c' s_c'j − s_cj (the other classes' counts)
//	             theta_cj = −log((t_cj + λ) / (Σ_j t_cj + dλ))
//	             raw_c = theta_c · x − logsumexp_c(theta_c · x)   (no prior)
//	gaussian     pi_c = log(n_c / n), theta_cj = the class mean,
//	             sigma_cj = the class's population variance + ε,
//	             ε = 1e-9 · the largest variance of any feature,
//	             raw_c = pi_c − ½ Σ_j [(x_j − theta_cj)²/sigma_cj + log sigma_cj]
//
// The probability column is softmax(raw); rawPrediction is raw, the log
// posterior up to a constant per row. The prediction is the argmax of raw,
// or with Thresholds the argmax of probability_c / threshold_c (Spark's
// ProbabilisticClassificationModel). Multinomial and complement need
// non-negative features, Bernoulli 0 or 1 (at fit and at transform time,
// as Spark): anything else is an error naming the row and element.
//
// # Against scikit-learn
//
// The tests pin probabilities within 1e-9 of scikit-learn's MultinomialNB,
// BernoulliNB, ComplementNB and GaussianNB (testdata/peer_sklearn.py).
// The definitions agree except for two deliberate, documented choices
// (Spark's):
//
//   - The multinomial and Bernoulli class prior is smoothed like the
//     feature probabilities; scikit-learn's fitted prior is not (the test
//     passes Spark's prior to scikit-learn as class_prior).
//   - Complement predicts with theta · x only, as scikit-learn's
//     ComplementNB(norm=False) with two or more classes; norm=True (the
//     weight normalization of Rennie et al.) is not offered, as in Spark.
//   - Gaussian ε uses the weighted variance when weightCol is set (Spark);
//     scikit-learn's var_smoothing uses the unweighted one. Without weights
//     they are the same.
//
// Classes are the label values 0..K−1 (K = 1 + the largest label on any
// rank). A class with no rows keeps its smoothed prior in the discrete
// models; Gaussian naive Bayes and smoothing 0 need every class present.
//
// # Fitting, on one machine or many
//
// Fit reads a float32 or float64 vector column in place and sums rows in
// parallel on the workers of internal/parallel, each chunk into its own
// accumulators, folded in chunk order; no per-row allocation. The discrete
// models need only the class weights and feature sums: one all-reduce
// adds them over the ranks. Gaussian needs variances, which a plain sum of
// squares loses when a feature's mean is large beside its spread (Σx² −
// n·mean² cancels): each chunk sums x minus its first row and turns the
// sums into means and squared deviations (M2), chunks merge with the
// pairwise update of Chan, Golub and LeVeque, and the ranks all-gather
// their moments and merge them in rank order, so every rank gets the same
// model. BenchmarkGaussianNBFashionMNIST measures the 60k × 784
// Fashion-MNIST fit.
//
// # Sources
//
//   - Spark ML, Naive Bayes: https://spark.apache.org/docs/latest/ml-classification-regression.html#naive-bayes
//     and NaiveBayes.scala (the formulas above).
//   - C. D. Manning, P. Raghavan and H. Schütze, Introduction to Information
//     Retrieval, ch. 13 (multinomial and Bernoulli models), 2008.
//   - J. D. M. Rennie, L. Shih, J. Teevan and D. R. Karger, "Tackling the
//     Poor Assumptions of Naive Bayes Text Classifiers", ICML 2003
//     (complement naive Bayes).
//   - scikit-learn's naive_bayes module documentation (var_smoothing).
//   - T. F. Chan, G. H. Golub and R. J. LeVeque, "Algorithms for Computing
//     the Sample Variance: Analysis and Recommendations", The American
//     Statistician 37(3), 1983 (merging partial variances).
package bayes
