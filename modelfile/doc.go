// Package modelfile reads and writes fathom's model files and training
// checkpoints, and turns a module's state dict into safetensors entries and
// back.
//
// A model file is one safetensors file (package safetensors): the weights
// are its tensors, in the state dict's order (nn.StateEntries), loadable by
// PyTorch's safetensors.torch.load_file; the architecture (layer specs,
// input shape, task, class and column names, standardization) is a JSON
// document in its metadata under [ArchitectureKey]. A checkpoint is one
// safetensors file too, with the model under "model/", the optimizer under
// "optim/" and the loop's position in the metadata. Both are written to a
// temporary file and renamed.
//
// Package nn knows nothing of files; [SaveSafetensors], [LoadSafetensors],
// [StateEntries] and [LoadEntries] are the bridge.
package modelfile
