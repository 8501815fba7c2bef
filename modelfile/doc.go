// Package modelfile reads and writes fathom's model files and training
// checkpoints, turns a module's state dict into safetensors entries and
// back, and holds the trained model: everything serving and batch
// inference need, without the trainer, YAML configs or plotting.
//
// # Files
//
// A model file is one safetensors file (package safetensors): the weights
// are its tensors, in the state dict's order (nn.StateEntries), loadable by
// PyTorch's safetensors.torch.load_file; the architecture (layer specs,
// input shape, task, class and column names, standardization) is a JSON
// document in its metadata under [ArchitectureKey]. A checkpoint is one
// safetensors file too, with the model under "model/", the optimizer under
// "optim/" and the loop's position in the metadata. Both are written to a
// temporary file and renamed; a truncated or corrupted file fails the
// safetensors checks with an error naming it.
//
// Package nn knows nothing of files; [SaveSafetensors], [LoadSafetensors],
// [StateEntries] and [LoadEntries] are the bridge.
//
// # Trained models
//
// A [Model] is a network (*nn.Sequential) with its spec, task, class and
// column names, label and input standardization. [Load] rebuilds the
// network from a model file without any Go code for it; [Model.Save]
// writes one. [Model.Predict] runs a table of raw features (matching
// columns by name and standardizing a copy), [Model.PredictRows] raw
// float32 rows with no table, [Model.Evaluate] scores a labelled table, and
// [Model.ReadInput] reads a CSV or Parquet input.
//
// [Features] ([Model.Features]) is the one path from input rows to the
// network's input, used by eval, predict, batch predict (package infer)
// and serve: [Features.Table] for a Table, [Features.Frame] for a Frame
// (vector columns v read element by element as v[0], v[1], ...) and
// [Features.Rows] for raw rows (an OIP request, a Parquet matrix). Each
// imputes missing values with the training means and standardizes in
// float64 as training did (data.Standardizer.Apply), so the same rows give
// the same features, bit for bit, whoever reads them. [Predictions] write
// themselves as CSV, JSON lines or Parquet ([Predictions.WriteFile]).
//
//	m, err := modelfile.Load("runs/iris/model.safetensors")
//	if err != nil { ... }
//	p, err := m.PredictRows([]float32{5.1, 3.5, 1.4, 0.2}, 1)
//	fmt.Println(p.Classes[p.Class[0]])
//
// # Evaluation loop
//
// [EvalBatches] is the one evaluation loop of fathom (evaluation mode,
// NoGrad inputs, a metrics.Accumulator); [Evaluate] runs it over a
// data.Loader, and the trainer runs it after every epoch.
package modelfile
