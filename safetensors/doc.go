// Package safetensors reads and writes the safetensors format of the Hugging
// Face safetensors project, on plain bytes: files written here load in
// PyTorch (safetensors.torch.load_file) and files written there load here.
// A safetensors file is an 8-byte little-endian header size N, an N-byte
// JSON header naming each tensor's dtype, shape and byte range, and the
// little-endian row-major tensor bytes.
//
// The package knows nothing of tensors, layers or models: an [Entry] is a
// name, a dtype name ("F32", "BF16", "I64", ...), a shape and the raw data.
// [Write] and [WriteFile] produce the same bytes as the reference writer
// (tensors ordered by alignment then name, header padded to 8 bytes);
// [Read] and [ReadFile] validate everything a hostile file could get wrong
// (header size, JSON, dtypes, offsets that overlap, leave gaps or run past
// the data, shape × dtype size against the byte range, duplicate names) and
// report errors that name the file and the tensor; such errors wrap
// [ErrFormat].
//
// Example:
//
//	w := safetensors.F32("linear.weight", []int{2, 3}, []float32{1, 2, 3, 4, 5, 6})
//	err := safetensors.WriteFile("model.safetensors", []safetensors.Entry{w},
//		map[string]string{"format": "pt"})
//	...
//	f, err := safetensors.ReadFile("model.safetensors")
//	e, ok := f.Tensor("linear.weight")
//	values, err := e.Float32s()
//
// Package modelfile builds fathom's model files and checkpoints on this
// format.
package safetensors
