// Package tensor provides fathom's n-dimensional arrays and their automatic
// differentiation: the Tensor type, dtypes, views, NumPy broadcasting,
// elementwise math, reductions, matrix products and a dynamic autograd
// engine in the style of PyTorch.
//
// # Tensors
//
// A *Tensor is a view (shape, strides, offset) of a typed storage that other
// tensors may share. Float32 is the first-class dtype; Float64 is fully
// supported; Int64, Int32, Uint8 and Bool cover indices, labels and masks;
// Float16 and BFloat16 are storage types that every op converts to float32,
// computes on, and rounds back (round to nearest, ties to even).
//
//	x := tensor.FromFloat32([]float32{1, 2, 3, 4, 5, 6}, 2, 3) // wraps the slice, no copy
//	z := tensor.Zeros(tensor.Float32, 64, 784)
//	rng := tensor.NewRNG(1)                                   // explicit, seeded, reproducible
//	w := rng.Normal(tensor.Float32, 0, 0.05, 256, 784)
//
// Ops never change their inputs' shapes; they return new tensors. View ops
// (Reshape when possible, View, Transpose, T, Permute, Narrow, Slice,
// Select, Expand, Squeeze, Unsqueeze, Flatten) share storage and copy
// nothing; Contiguous copies only when needed. Negative dims count from the
// end everywhere. Every binary elementwise op broadcasts like NumPy and
// promotes dtypes like PyTorch (bool < integers < floats, wider wins).
// Methods chain:
//
//	h := x.MatMul(w1.T()).Add(b1).Relu() // or tensor.Linear(x, w1, b1).Relu()
//
// Float32s, Float64s and Int64s return the elements of a tensor in
// row-major order: the storage itself when the tensor is contiguous (writes
// go through), otherwise a copy.
//
// Shape errors are programmer errors: ops panic with a message that names
// the op and the shapes, as gonum's mat does.
//
// # Autograd
//
// A tensor that requires grad (SetRequiresGrad(true) on a float leaf, such
// as a parameter) makes every op that takes it record a node: the op's
// inputs and a closure, written next to the op's forward code, that maps
// the output's gradient to the inputs' gradients. There is no global tape:
// the graph is the tensors' own links.
//
//	w := tensor.NewRNG(0).Normal(tensor.Float64, 0, 1, 3, 2).SetRequiresGrad(true)
//	loss := x.MatMul(w).Square().MeanAll()
//	loss.Backward()
//	g := w.Grad() // ∂loss/∂w, shape [3 2]
//
// Backward (on a one-element tensor) or BackwardWith (seeded with a
// gradient) sorts the graph topologically and accumulates into the Grad of
// every leaf that requires grad, summing over broadcast dims so a gradient
// always has its tensor's shape and dtype. Gradients accumulate across
// calls: ZeroGrad clears them in place (keeping the buffer) and SetGrad(nil)
// drops them. Non-leaf tensors get a Grad only after RetainGrad.
//
// Backward frees the graph as it goes: closures and the tensors they saved
// are dropped so memory returns at once. Calling Backward through the same
// graph again panics with a message saying so, unless the first call was
// t.Backward(tensor.RetainGraph) (BackwardOpts{RetainGraph: true}).
//
// Only Float32, Float64 and the 16-bit types are differentiable; integer
// and Bool tensors never require grad. The gradient of a kink (Relu and Abs
// at 0, Clamp at its bounds) follows PyTorch's convention, and so does NaN:
// it propagates through every activation, Clamp, Max/Min (NaN wins, and
// ArgMax/ArgMin return the first NaN), Maximum/Minimum and MaxPool2d, and
// the gradients at NaN are torch 1.13's.
//
// In-place ops (AddInPlace, MulScalarInPlace, AxpyInPlace, AddcmulInPlace,
// AddcdivInPlace, CopyFrom, Fill, Zero, ...) are for optimizers, gradient
// buffers and initialization: they record nothing, and they panic on a
// non-leaf tensor that requires grad. A recorded graph that saved a tensor
// you later change in place sees the new values (there is no version
// check), so update parameters only after Backward.
//
// Backward writes the Grad of the leaves it reaches without locks: run one
// Backward at a time over a given set of parameters (data-parallel replicas
// each own theirs). Forward passes may run concurrently.
//
// Backward closures of Linear and MatMul write a 2-D parameter's gradient
// straight into its Grad (the GEMM accumulates with beta = 1), so a
// training step allocates no gradient temporaries for weights.
//
// # Gradient-ready hooks
//
// p.RegisterGradReadyHook(fn), PyTorch's register_post_accumulate_grad_hook,
// runs fn(p) inside Backward as soon as p's gradient is complete, so that
// data-parallel training can start reducing the last layers' gradients
// while Backward still works on the first. Before walking the graph,
// Backward counts how many recorded ops take each hooked leaf as an input;
// it fires the leaf's hooks when the last of them has run its backward. So
// a hook runs once per Backward call that reaches its leaf, after every
// contribution of that call (both uses of a tied weight) has been added to
// what Grad already held, on the goroutine running Backward. Leaves fire in
// the order Backward finishes them, the last layer first; a leaf's hooks in
// registration order.
//
// A leaf the graph does not reach, a frozen one (RequiresGrad false) and
// one used only through a Detach'ed view get no gradient and no call;
// loss.ReachableLeaves() lists, before Backward, the leaves it will reach,
// in firing order, which tells unused parameters apart. Hooks go on leaves
// that require grad only (anything else panics), and the function
// RegisterGradReadyHook returns removes one. After p's hooks, Backward
// neither reads nor writes p.Grad again in that call, so a hook may hand
// it to another goroutine (an all-reduce averaging it in place) while
// Backward goes on. A hook must not call Backward. A hook removed while
// Backward runs does not run afterwards; one registered while it runs may
// first fire in the next call. Without hooks, Backward does no extra work
// and allocates nothing more.
//
// # Inference without a graph
//
// Recording is switched off per tensor, not per goroutine or process:
// x.NoGrad() returns a view of x marked for inference. An op with an
// inference-marked input records nothing and marks its output too, so a
// whole forward pass builds no graph even though the parameters it uses
// require grad:
//
//	logits := model.Forward(batch.NoGrad()) // no nodes, no saved tensors
//
// Because the mark travels with the data, any number of goroutines can run
// such forward passes over shared parameters at once; there is no global
// switch for them to race on. Frozen parameters (SetRequiresGrad(false))
// record nothing either, and Detach returns a view with no history.
//
// # Operations
//
//   - creation: FromFloat32/FromFloat64/FromInt64/FromInt32/FromUint8 (no
//     copy), FromBool, FromFloat16Bits/FromBFloat16Bits, FromValues, Scalar,
//     Zeros, Ones, Full, ZerosLike, OnesLike, FullLike, Arange, Linspace, Eye,
//     OneHot; RNG: Uniform, Normal, Bernoulli, RandInt, Perm, Shuffle, Split,
//     MarshalBinary/UnmarshalBinary.
//   - elementwise (broadcasting, differentiable): Add, Sub, Mul, Div, Pow,
//     Maximum, Minimum, Where, MaskedFill, the *Scalar forms, Neg, Abs, Sign,
//     Floor, Ceil, Round, Exp, Expm1, Log, Log1p, Sqrt, Rsqrt, Reciprocal,
//     Square, PowScalar, Sin, Cos, Erf, Tanh, Sigmoid, LogSigmoid, Relu,
//     LeakyRelu, Elu, Softplus, Silu, Gelu, GeluTanh, Clamp.
//   - comparisons and logic (Bool results): Eq, Ne, Lt, Le, Gt, Ge and their
//     *Scalar forms, LogicalAnd, LogicalOr, LogicalXor, LogicalNot.
//   - reductions (dims list, empty for all; keepDim): Sum, Mean, Max, Min,
//     Prod, Var, Std, LogSumExp, plus SumAll, MeanAll, MaxAll, MinAll, Norm;
//     MaxDim/MinDim (values and indices), ArgMax, ArgMin; Softmax and
//     LogSoftmax along a dim.
//   - linear algebra: MatMul (torch.matmul semantics), Linear, Dot, Outer.
//   - fused normalization and loss (differentiable): LayerNorm, BatchNorm
//     (batch statistics), CrossEntropyRows and CrossEntropySum (from
//     logits, with CrossEntropyTargets).
//   - in place (no autograd): AddInPlace, SubInPlace, MulInPlace,
//     DivInPlace, AddScalarInPlace, MulScalarInPlace, AxpyInPlace,
//     AddcmulInPlace, AddcdivInPlace, ClampInPlace, CopyFrom, Fill, Zero,
//     SetAt.
//
// Package tensor/gradcheck checks any differentiable function against
// central finite differences; every op above passes it on broadcast shapes,
// non-contiguous views and 0-d inputs.
//
// # Custom ops
//
// CustomOp records an op whose forward the caller computed (a fused kernel
// outside this package) with its own backward function. The fused ops of
// this package that package nn's layers and losses run are built on it:
// LayerNorm, BatchNorm (training mode, with the batch statistics) and the
// cross-entropy from logits (CrossEntropyRows, CrossEntropySum), each
// tested against the composite of primitive ops it replaces. LinearRelu
// and Conv2dOpts.Relu fuse the most common activation into the layer
// before it.
//
// # Memory
//
// Float storage comes from a recycler (size-classed free lists), and
// ops that overwrite their whole output skip zeroing it. Backward gives
// back to the recycler the gradient buffers it allocated and consumed, and the
// scratch ops saved for backward (max-pool window codes), as soon as no
// node holds them; tensors a caller can reach (activations, Grad, seeds,
// slices wrapped with FromFloat32) are never recycled. A training step of
// a fixed model thus asks the Go allocator only for its forward
// activations.
//
// # Speed
//
// Float32 and float64 ops on contiguous data call package internal/kernel
// (AVX-512/AVX2 assembly with a pure-Go fallback) or tight loops; strided
// and broadcast operands are walked by one iterator that merges dims and
// leaves the innermost dim to a tight loop. MatMul hands transposed views
// to GEMM as transposed operands instead of copying, and Linear runs as one
// GEMM over a bias-filled output. Large loops are split over cores with
// internal/parallel.
package tensor
