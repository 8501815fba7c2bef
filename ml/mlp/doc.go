// Package mlp is Spark ML's MultilayerPerceptronClassifier: a
// feed-forward neural network of sigmoid hidden layers and a softmax
// output, fitted on all the rows at once (full batch) by L-BFGS, on one
// process or on the ranks of a job.
//
//	e := mlp.NewMultilayerPerceptronClassifier()
//	e.Layers = []int{784, 100, 10} // inputs, hidden units, classes
//	m, err := e.Fit(ml.Local(frame)) // "features" vectors, "label" 0..9
//	out, err := m.Transform(test)    // + rawPrediction, probability, prediction
//
// # The model
//
// For a sample x (a row of the features column), each layer computes
// a = x·W + b from the previous layer's output; hidden layers apply the
// logistic sigmoid, the output layer the softmax. The loss is the mean
// cross-entropy over the samples, plus regParam/2·‖W‖² over the weight
// matrices (not the biases; regParam is 0 by default, as Spark, which has
// no penalty; scikit-learn's alpha is regParam·rows). Labels are class
// indices 0, ..., K−1 (StringIndexer makes them).
//
// The parameters are Spark's (layers, blockSize, maxIter, tol, seed,
// solver, stepSize, initialWeights and the column names), with Spark's
// defaults, and two of fathom's: regParam and precision. Differences from
// Spark:
//   - layers[0] and the last size may be 0, meaning the features' width
//     and one more than the largest label (Spark wants both given);
//   - blockSize is accepted and ignored: Spark stacks rows into blocks of
//     128 to use BLAS level 3; here every evaluation is already one GEMM
//     per layer over all of a rank's rows;
//   - the initial weights follow Spark's rule (uniform in ±2.4/√fan_in for
//     weights and biases alike, from LeCun et al., "Efficient BackProp",
//     1998) but from fathom's own generator, so one seed does not give
//     Spark's weights; initialWeights in Spark's layout does.
//
// The fitted model's Weights use Spark's layout (for each layer the
// in × out matrix row-major, then the biases), so Spark's model.weights
// can be given as initialWeights and compared.
//
// # Solvers
//
// "l-bfgs" (the default) is optim.MinimizeLBFGS with a strong-Wolfe line
// search, ten correction pairs, maxIter iterations (at most 10·maxIter
// evaluations) and tol as the relative change of the loss that stops it
// (Nocedal and Wright, "Numerical Optimization", 2nd ed., algorithm 7.5).
// "gd" is Spark's GradientDescent with miniBatchFraction 1: steps of
// stepSize/√t along the full gradient, until ‖Δw‖ < tol·max(‖w‖, 1).
//
// # How it is computed
//
// The loss and gradient are written directly on fathom's GEMM kernels
// (internal/kernel) rather than as an nn module on the autograd tape: a
// full-batch evaluation is two large products (x·W₁ forward and the
// gradient of W₁; no gradient of the inputs is needed) and small ones for
// the other layers, and doing them by hand keeps every buffer allocated
// once for the whole fit. The backward pass is the usual back-propagation
// (Rumelhart, Hinton and Williams, "Learning representations by
// back-propagating errors", 1986), with the softmax and cross-entropy
// fused (delta = p − onehot(y)). The activations are stored feature-major
// (a feature's values for every sample contiguous), the layout in which
// the kernels run these shapes fastest. Tests check the gradient against
// central differences and the loss and gradient against PyTorch's
// autograd (testdata/peer_torch.py).
//
// Precision "float64" (the default) computes everything in float64.
// "float32" runs the passes in float32 (the GEMMs about twice as fast)
// while the weights, the summed loss and gradient and the optimizer stay
// float64.
//
// # Distributed
//
// Each rank computes the summed loss and gradient of its rows; one
// all-reduce of [loss, gradient...] per evaluation (MLlib's
// treeAggregate) gives every rank the same sums, so L-BFGS takes the same
// steps everywhere and every rank ends with the same model. In float64 it
// equals the single-process model within 1e-9 relative as long as the
// differently ordered sums (apart by about 1e-16) do not grow; but the
// loss is not convex, and over many iterations they do (measured on a
// 2-8-3 network and 300 samples over 3 ranks: within 1e-12 after 20
// iterations, 1e-9 after 50, not 1e-5 after 100; the conformance test
// runs 20). In float32 the ranks still agree exactly with each other, but
// differ from a single process by float32 rounding amplified by the
// iterations. Bad input on any rank (a label ≥ the output size, a NaN
// feature, mismatched widths) fails the fit on every rank, and the rank
// that has it names the row.
//
// # Speed
//
// BenchmarkFashionMNIST fits the case (60,000 × 784 pixels/255,
// 100 hidden units, 100 L-BFGS iterations, as `fathom bench ml mlp`
// fits it) in both precisions and reports fit_seconds, iterations,
// evaluations and test_accuracy (it skips when Debian's
// dataset-fashion-mnist is not installed):
//
//	go test -run '^$' -bench FashionMNIST -benchtime 1x ./ml/mlp/
//
// The peer, scikit-learn's MLPClassifier((100,), solver='lbfgs',
// max_iter=100), uses ReLU hidden units and reaches 85.1% test accuracy;
// the sigmoid network here reaches 86.8–86.9% in its 100 iterations (seeds
// 0, 1, 2; about 105 evaluations), checked by TestFashionMNISTAccuracy
// (go test -run FashionMNISTAccuracy ./ml/mlp/ -mlp.fashion). Measured on
// the shared 2-core development machine (indicative): 11.7 s in float32
// (scikit-learn: 121 s) and 33 s in float64, the machine partly busy.
//
// Sources: Spark ML's MultilayerPerceptronClassifier and its
// org.apache.spark.ml.ann package (FeedForwardTopology, AffineLayer,
// SigmoidFunction, SoftmaxLayerWithCrossEntropyLoss) as documented in the
// Spark ML guide ("Multilayer perceptron classifier"); scikit-learn's
// MLPClassifier for the penalty's scaling.
package mlp
