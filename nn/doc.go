// Package nn builds neural networks on package tensor: modules and
// layers, activations, losses, initializers, state dicts (with safetensors
// files) and layer specs that describe a model as data. It follows
// PyTorch's torch.nn in names, defaults and numerics, so a PyTorch user
// finds what they expect and state dicts interchange.
//
// # Modules
//
// A Module owns named parameters (tensors an optimizer trains), named
// buffers (saved state that is not trained, such as BatchNorm's running
// statistics) and named child modules. Every module embeds Base, which
// does the registration, the recursive walks and the mode flags, so a
// custom module is a struct, a constructor that registers its parts, and a
// Forward method:
//
//	type ToyModel struct {
//		nn.Base
//		net1 *nn.Linear
//		relu *nn.ReLU
//		net2 *nn.Linear
//	}
//
//	func NewToyModel(rng *tensor.RNG) *ToyModel {
//		m := &ToyModel{net1: nn.NewLinear(rng, 10, 10), relu: nn.NewReLU(), net2: nn.NewLinear(rng, 10, 5)}
//		m.Register("net1", m.net1)
//		m.Register("relu", m.relu)
//		m.Register("net2", m.net2)
//		return m
//	}
//
//	func (m *ToyModel) Forward(x *tensor.Tensor) *tensor.Tensor {
//		return m.net2.Forward(m.relu.Forward(m.net1.Forward(x)))
//	}
//
// Registration is explicit and happens once, in the constructor; Forward
// is plain Go with no reflection or lookups. RegisterParameter and
// RegisterBuffer take the address of the field (&m.Weight), so a nil field
// (an absent bias) is skipped and To can swap dtypes.
//
// The walks are deterministic: NamedParameters lists a module's own
// parameters in registration order, then each child's under "child.",
// depth first ("layers.0.weight"), a shared tensor once. Parameters gives
// the list an optimizer takes. Train and Eval set the mode of a whole tree
// (modules start in training mode, as in PyTorch); SetRequiresGrad(false)
// freezes a subtree for transfer learning; To(tensor.Float64) converts
// parameters and float buffers; Describe prints a tree like PyTorch's repr.
//
// Most layers map one tensor to one tensor and satisfy Layer
// (Forward(x) *tensor.Tensor), which Sequential chains. Sequential runs a
// Linear or Conv2d followed by a ReLU as one fused op (same values and
// gradients, no intermediate tensor); LayerNorm and training-mode
// BatchNorm run the fused ops tensor.LayerNorm and tensor.BatchNorm, which
// have their own backward and are tested against their composite forms.
// Modules with other inputs have their own typed methods, e.g.
// MultiheadAttention.Forward(q, k, v, AttentionOptions) and
// TransformerEncoderLayer.ForwardMasked.
//
// # Layers
//
// Containers: Sequential, ModuleList (generic over the module type),
// Residual (x + f(x), with an optional projection), Identity, Flatten.
// Layers: Linear (one fused GEMM), Conv2d (stride, padding, dilation,
// groups, rectangular kernels), MaxPool2d, AvgPool2d, AdaptiveAvgPool2d,
// BatchNorm (1d and 2d), LayerNorm, Dropout, Embedding (with a padding
// index), MultiheadAttention (masks, key padding, causal, dropout, batch
// or sequence first) and TransformerEncoderLayer (pre- or post-norm, ReLU
// or GELU). Activations as modules: ReLU, LeakyReLU, ELU, Sigmoid, Tanh,
// Softplus, SiLU (Swish), GELU (exact or tanh), Softmax, LogSoftmax; their
// functional forms are the tensor methods (x.Relu(), x.Gelu(), ...).
//
// Constructors take the common arguments (NewLinear(rng, in, out),
// NewConv2d(rng, in, out, kernel)); a ...Config struct and a ...With
// constructor cover the rest. Scalar settings (Eps, Momentum, P, Slope)
// are exported fields that may be changed after construction.
//
// # Randomness
//
// All randomness comes from an explicit *tensor.RNG: constructors draw
// their initial weights from it (PyTorch's default scheme per layer:
// Linear and Conv weights kaiming_uniform with a = √5 and biases
// U(−1/√fan_in, 1/√fan_in), Embedding N(0, 1), norms ones and zeros), and
// Dropout splits its own stream from it. The same seed builds the same
// model and the same training run. The Init functions (InitXavierUniform,
// InitKaimingNormal, ...) re-initialize a tensor in place.
//
// # Losses
//
// MSELoss, L1Loss, HuberLoss, SmoothL1Loss, BCELoss, BCEWithLogitsLoss,
// NLLLoss and CrossEntropyLoss take a Reduction (ReduceMean, the zero
// value; ReduceSum; ReduceNone) or an options struct that holds one, and
// follow PyTorch's formulas exactly, including class weights, ignored
// targets, label smoothing, probability targets and pos_weight; each
// function documents its formula. CrossEntropyLoss computes the loss and
// its gradient in one pass over the logits (tensor.CrossEntropyRows and
// tensor.CrossEntropySum); it is tested against the composite log_softmax
// form.
//
//	loss := nn.CrossEntropyLoss(model.Forward(x), labels, nn.ClassOptions{LabelSmoothing: 0.1})
//	loss.Backward()
//
// # State dicts and files
//
// StateDict returns parameters and buffers by dotted name (PyTorch's
// names: "0.weight", "norm.running_mean", "self_attn.in_proj_weight");
// LoadStateDict copies them back in place after checking every key and
// shape, and returns a *StateDictError naming all missing, unexpected and
// mismatched keys. Package modelfile stores them in safetensors files
// that PyTorch reads and writes; nn itself knows nothing of files.
//
// # Specs
//
// A Spec describes a Sequential model as data, the model section of a
// training config (train/job decodes its YAML) and the architecture stored
// as JSON next to the weights. It
// names only output sizes; Build infers every input size from the example
// shape and reports what does not chain:
//
//	spec, err := nn.DecodeSpecJSON(data) // strict: unknown fields are errors
//	model, outShape, err := spec.Build(tensor.NewRNG(seed))
//	// model.layers[3] (linear): input has 3136 features but in=3000
//
// LayerTypes lists the layer types and the fields each accepts.
//
// # Concurrency
//
// A model in eval mode changes no state in Forward, so many goroutines may
// run it at once on inputs marked with NoGrad. Training-mode Forward
// updates batch-norm statistics and dropout streams and is not safe for
// concurrent use.
package nn
