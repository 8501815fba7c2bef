// Package prune removes weights from trained networks: magnitude pruning
// of single weights (unstructured) and pruning of whole neurons and
// convolution channels (structured), once or on a schedule while a model is
// fine-tuned.
//
// # Unstructured
//
// Magnitude zeroes the fraction Sparsity of the weights of every Linear and
// Conv2d with the smallest absolute values, either per layer or over all of
// them at once (global: layers whose weights matter less lose more; Han et
// al., "Learning both Weights and Connections for Efficient Neural
// Networks", NeurIPS 2015). The network keeps its shape; package modelfile
// stores weight tensors that are mostly zero as a bitmask and their nonzero
// values, so the model file shrinks with the sparsity.
//
// # Structured
//
// Structured zeroes whole output rows of every Linear and Conv2d but the
// last (its outputs are the model's): the neurons or channels of smallest
// L1 or L2 norm (Li et al., "Pruning Filters for Efficient ConvNets", ICLR
// 2017), together with their bias and the scale and shift of a BatchNorm
// on them, so they output exact zeros. Shrink then removes them and the
// matching inputs of the next layer, building a smaller network that
// computes the same outputs: fewer parameters, a smaller file and faster
// inference.
//
// # During training
//
// Masks returned by Magnitude and Structured are re-applied after every
// optimizer step by Optimizer, which wraps any optim.Optimizer and also
// follows a Schedule: pruning once at a given step, or gradually, raising
// the sparsity over a range of steps along Zhu and Gupta's cubic ramp
// s(t) = S·(1 − (1 − t/T)³) ("To prune, or not to prune", 2017), as
// PyTorch's torch.nn.utils.prune leaves to the user.
//
// Networks are Sequentials of float32 layers; between a pruned layer and
// the next Linear or Conv2d only layers that map zero to zero may stand
// (ReLU, LeakyReLU, Tanh, GELU, Dropout, MaxPool2d, AvgPool2d, Flatten,
// BatchNorm): any other layer is named in an error.
package prune
