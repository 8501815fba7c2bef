package modelfile

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/fathom-ml/fathom/safetensors"
)

// Sparse storage of pruned weights. A float32 tensor that is mostly zero
// (magnitude pruning) is stored as two tensors: NAME.mask, U8, one bit per
// element in row-major order (bit i%8 of byte i/8, set for a nonzero), and
// NAME.values, F32, the nonzero elements in order. The metadata entry
// SparseKey maps each such NAME to its dense shape. A tensor goes sparse
// only when that saves at least a quarter of its bytes (about 22% zeros
// and more), so dense models are stored exactly as before.
//
// Readers other than fathom see the two tensors as they are; Load restores
// the dense tensor.

// SparseKey is the metadata key listing the tensors stored sparse.
const SparseKey = "fathom.sparse"

// sparseMinElems is the smallest tensor worth storing sparse.
const sparseMinElems = 256

// SparseEntries returns entries with every float32 tensor that is sparse
// enough replaced by its mask and values, and the metadata that lists them
// (nil when none is).
func SparseEntries(entries []safetensors.Entry) ([]safetensors.Entry, map[string]string) {
	shapes := map[string][]int{}
	out := make([]safetensors.Entry, 0, len(entries))
	for _, e := range entries {
		n := len(e.Data) / 4
		if e.DType != "F32" || n < sparseMinElems {
			out = append(out, e)
			continue
		}
		nnz := 0
		for i := range n {
			if math.Float32frombits(binary.LittleEndian.Uint32(e.Data[4*i:])) != 0 {
				nnz++
			}
		}
		if sparse := (n+7)/8 + 4*nnz; 4*sparse > 3*len(e.Data) {
			out = append(out, e)
			continue
		}
		mask := make([]byte, (n+7)/8)
		values := make([]byte, 0, 4*nnz)
		for i := range n {
			w := e.Data[4*i : 4*i+4]
			if math.Float32frombits(binary.LittleEndian.Uint32(w)) != 0 {
				mask[i/8] |= 1 << (i % 8)
				values = append(values, w...)
			}
		}
		out = append(out,
			safetensors.Entry{Name: e.Name + ".mask", DType: "U8", Shape: []int{len(mask)}, Data: mask},
			safetensors.Entry{Name: e.Name + ".values", DType: "F32", Shape: []int{nnz}, Data: values})
		shapes[e.Name] = slices.Clone(e.Shape)
	}
	if len(shapes) == 0 {
		return out, nil
	}
	js, err := json.Marshal(shapes)
	if err != nil {
		panic(err) // a map of int slices always encodes
	}
	return out, map[string]string{SparseKey: string(js)}
}

// DenseEntries reverses SparseEntries: the tensors that meta lists as
// sparse become dense again. A mask or values tensor that does not fit its
// shape is an error naming it.
func DenseEntries(entries []safetensors.Entry, meta map[string]string) ([]safetensors.Entry, error) {
	js, ok := meta[SparseKey]
	if !ok {
		return entries, nil
	}
	var shapes map[string][]int
	if err := json.Unmarshal([]byte(js), &shapes); err != nil {
		return nil, fmt.Errorf("metadata %s: %w", SparseKey, err)
	}
	byName := make(map[string]safetensors.Entry, len(entries))
	for _, e := range entries {
		byName[e.Name] = e
	}
	out := make([]safetensors.Entry, 0, len(entries))
	for _, e := range entries {
		base, part := "", ""
		for _, suf := range []string{".mask", ".values"} {
			if b, ok := strings.CutSuffix(e.Name, suf); ok {
				if _, listed := shapes[b]; listed {
					base, part = b, suf
				}
			}
		}
		switch part {
		case "":
			out = append(out, e)
			continue
		case ".values":
			continue // decoded with its mask
		}
		shape := shapes[base]
		n := 1
		for _, d := range shape {
			if d < 0 || (d > 0 && n > math.MaxInt32/d) {
				return nil, fmt.Errorf("sparse tensor %q: bad shape %v", base, shape)
			}
			n *= d
		}
		vals, ok := byName[base+".values"]
		switch {
		case !ok:
			return nil, fmt.Errorf("sparse tensor %q: no %s.values tensor", base, base)
		case e.DType != "U8" || len(e.Data) != (n+7)/8:
			return nil, fmt.Errorf("sparse tensor %q: mask is %s of %d bytes, want U8 of %d for shape %v", base, e.DType, len(e.Data), (n+7)/8, shape)
		case vals.DType != "F32":
			return nil, fmt.Errorf("sparse tensor %q: values are %s, want F32", base, vals.DType)
		}
		nnz := 0
		for i, b := range e.Data {
			if i == len(e.Data)-1 && n%8 != 0 {
				b &= 1<<(n%8) - 1
			}
			nnz += bits.OnesCount8(b)
		}
		if len(vals.Data) != 4*nnz {
			return nil, fmt.Errorf("sparse tensor %q: the mask marks %d nonzeros, %d values are stored", base, nnz, len(vals.Data)/4)
		}
		dense := make([]byte, 4*n)
		k := 0
		for i := range n {
			if e.Data[i/8]&(1<<(i%8)) != 0 {
				copy(dense[4*i:], vals.Data[4*k:4*k+4])
				k++
			}
		}
		out = append(out, safetensors.Entry{Name: base, DType: "F32", Shape: slices.Clone(shape), Data: dense})
	}
	return out, nil
}
