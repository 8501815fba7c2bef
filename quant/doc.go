// Package quant converts a trained float32 network to int8 for inference:
// post-training quantization of its Linear and Conv2d layers.
//
// Weights are quantized per output channel, symmetrically (int8 in
// [−127, 127] times one float32 scale per channel). Activations, the inputs
// of each quantized layer, are uint8 with an affine map x ≈ s·(q − z):
//
//   - Dynamic (the default): each batch is quantized with its own min-max
//     map when the layer runs (PyTorch's quantize_dynamic). No data needed.
//   - Static: the map is fixed beforehand from a calibration sample run
//     through the float model, with an Observer per layer input: MinMax
//     (the range seen) or Histogram (the range between two percentiles of
//     the values, which ignores rare outliers and resolves the bulk
//     better), each symmetric (zero point 128) or asymmetric.
//
// Quantize returns the new network (nn.QLinear, nn.QConv2d in place of the
// float layers) and its spec; the layers it cannot convert (grouped
// convolutions, embeddings, attention, normalization, ...) keep float32 and
// are named in the Report. The int8 layers live in package nn so that model
// files holding them load through nn's spec registry like any other layer.
//
//	qnet, qspec, rep, err := quant.Quantize(net, spec, quant.Options{Mode: quant.Static,
//		Calibration: sample, Observer: quant.ObserveHistogram})
//
// Sources: B. Jacob et al., "Quantization and Training of Neural Networks
// for Efficient Integer-Arithmetic-Only Inference", CVPR 2018; H. Wu et al.,
// "Integer Quantization for Deep Learning Inference: Principles and
// Empirical Evaluation", arXiv:2004.09602 (2020), for per-channel weights
// and percentile calibration.
package quant
