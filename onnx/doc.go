// Package onnx converts fathom models to ONNX files and ONNX files to
// fathom models: export for running a fathom network in any ONNX runtime,
// import for predicting, serving and fine-tuning networks trained in
// PyTorch (torch.onnx.export) with fathom.
//
// # Export
//
// [Export] walks a model's network (the layers its nn.Spec built) and
// writes one node or a small group of nodes per layer: Linear → Gemm (or
// Transpose + MatMul + Add on inputs of higher rank), Conv2d → Conv,
// pooling → MaxPool, AveragePool, GlobalAveragePool, BatchNorm →
// BatchNormalization, LayerNorm → LayerNormalization (opset 17),
// activations → Relu, Sigmoid, Tanh, LeakyRelu, Elu, Softplus, Softmax,
// LogSoftmax, or their definitions in elementwise ops (GELU as
// 0.5·x·(1+erf(x/√2)), the tanh GELU, SiLU as x·σ(x), softplus with β),
// Flatten → Flatten, Dropout → Dropout (inference: the identity, the
// ratio kept), a residual block → its branches and an Add. Initializers
// carry the state-dict names ("3.weight"). The graph takes the raw
// features: the model's standardization is its first two nodes (Sub of
// the means, Mul by the inverse standard deviations). The whole
// architecture JSON (modelfile.Architecture: spec, task, classes,
// columns, label, imputation, standardization) is kept in the file's
// metadata_props under [MetadataKey], so that an import restores
// everything around the network. [WriteFile] writes the file atomically.
//
// # Import
//
// [Import] maps an ONNX graph back to fathom layers, so the model is an
// ordinary modelfile.Model that predicts, serves, trains and saves. It
// follows the graph from its one input to its one output: each op (or
// known group of ops) becomes a layer spec, the initializers its weights.
// Gemm, and MatMul by a constant with an optional Add, become a Linear;
// Conv a Conv2d; MaxPool and AveragePool (with a preceding zero Pad,
// as PyTorch writes count_include_pad) pooling; Flatten and a Reshape to
// [batch, -1] a Flatten; Identity nothing. A run of elementwise ops that
// starts and ends at one tensor and uses only scalar constants is
// evaluated at sample points and compared with GELU (exact and tanh),
// SiLU and softplus(β): so the op sequences different exporters write
// for the same activation all import. Two branches from one tensor
// joined by an Add are a residual block, the shortcut being the identity
// or one Linear or 1×1 convolution (fathom's projection). Sub and Mul or
// Div by per-feature constants at the input become the model's
// standardization. Self-attention written out with constant shapes (as
// Export writes it) is recognized and folded, with the layer norms,
// residual Adds and feed-forward linears around it, into a transformer
// encoder layer. Anything else is an [UnsupportedError] naming the op
// and its node.
//
// What the model predicts comes from, in order: [ImportOptions], the
// architecture fathom stored in the file, the metadata_props keys
// [MetaTask], [MetaClasses] and [MetaColumns] (which any producer can
// set), and defaults: a classifier over classes "0".."k-1" when the
// output has k > 1 values, else a regression; inputs unnamed (taken in
// order). A classifier graph that ends in Softmax imports with a
// LogSoftmax instead, so that Predict's softmax gives its probabilities.
//
// The package registers ".onnx" with modelfile.RegisterFormat, so
// modelfile.Load, and every command built on it (fathom predict, serve,
// eval), opens ONNX files once the package is linked in.
//
// # Opsets
//
// Export writes IR version 8 and opset [DefaultOpset] (17) by default,
// any of 13 to 21 on request (LayerNorm needs 17). Import reads opsets 7
// to 21, with the attribute defaults of each (Softmax's axis before 13).
// Only the default domain is read; external data is not.
//
// # Protobuf
//
// ONNX files are protocol buffers of onnx.proto (proto2). This package
// encodes and decodes the dozen messages it needs by hand with
// google.golang.org/protobuf/encoding/protowire, instead of generating Go
// from onnx.proto: no generated code, proto file, licence note or
// regeneration script to carry for ~300 lines of field handling; the
// decoder keeps sub-slices of the input rather than copying, skips what
// it does not use (subgraphs, training info, functions, sparse tensors),
// so nesting depth is fixed and work and memory stay proportional to the
// file; and bounds come where they matter: every declared length is
// checked against the bytes left, tensors' declared shapes against the
// data they hold (a huge declared shape fails before any allocation),
// ranks and element counts are capped. Errors of malformed bytes wrap
// [ErrFormat].
//
// Sources: the ONNX IR specification (docs/IR.md) and operator
// specifications (docs/Operators.md) of github.com/onnx/onnx, onnx.proto
// for the field numbers; PyTorch's torch.onnx.export for what the
// importer meets in practice.
package onnx
