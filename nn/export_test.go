package nn

// CrossEntropyComposite exposes the composite cross-entropy to the tests.
var CrossEntropyComposite = crossEntropyComposite

// LayerNormComposite and BatchNormComposite expose the composite norms,
// the references of the fused ones.
var (
	LayerNormComposite = layerNormComposite
	BatchNormComposite = batchNormComposite
)
