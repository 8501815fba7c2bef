package tensor

// LayerNormComposite and BatchNormComposite expose the composite norms,
// the references of the fused ones.
var (
	LayerNormComposite = layerNormComposite
	BatchNormComposite = batchNormComposite
)
