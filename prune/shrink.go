package prune

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// Shrink returns a smaller copy of net (and its spec) without the dead
// output units of its prunable layers but the last — units whose weight
// row, bias and BatchNorm scale and shift are all zero, as Structured
// leaves them — and without the matching inputs of the next Linear or
// Conv2d (through a Flatten, a channel's block of features). The copy
// computes the same outputs as net: a dead unit outputs zero, which the
// layers between map to zero (see Structured). spec must be the one net
// was built from.
func Shrink(net *nn.Sequential, spec nn.Spec) (*nn.Sequential, nn.Spec, error) {
	ts, err := chain(net)
	if err != nil {
		return nil, nn.Spec{}, err
	}
	if len(spec.Layers) != net.Len() {
		return nil, nn.Spec{}, fmt.Errorf("prune: the spec has %d layers, the network %d", len(spec.Layers), net.Len())
	}
	n := net.Len()
	outKeep := make([][]int, n) // kept output units of layer i (nil: all)
	inKeep := make([][]int, n)  // kept input features/channels (nil: all)
	newSpec := nn.Spec{Input: slices.Clone(spec.Input), Layers: slices.Clone(spec.Layers)}
	for k, t := range ts {
		if t.next < 0 {
			break
		}
		keep := alive(t)
		if len(keep) == t.rows {
			continue
		}
		outKeep[t.index] = keep
		if t.bn != nil {
			for i := t.index + 1; i < t.next; i++ {
				if net.At(i) == nn.Layer(t.bn) {
					outKeep[i] = keep
				}
			}
		}
		newSpec.Layers[t.index].Out = len(keep)
		// The next layer's inputs: channels, or blocks of features after a
		// Flatten of channels.
		in := keep
		nt := ts[k+1]
		if lin, ok := net.At(nt.index).(*nn.Linear); ok {
			if _, conv := net.At(t.index).(*nn.Conv2d); conv {
				per := lin.In / t.rows
				in = make([]int, 0, len(keep)*per)
				for _, c := range keep {
					for j := range per {
						in = append(in, c*per+j)
					}
				}
			}
		}
		inKeep[nt.index] = in
	}
	// The sizes after the first pruned layer are inferred again.
	for i := range newSpec.Layers {
		if i > ts[0].index {
			newSpec.Layers[i].In = 0
		}
	}
	small, _, err := nn.Build(newSpec.Layers, newSpec.Input, tensor.NewRNG(0))
	if err != nil {
		return nil, nn.Spec{}, fmt.Errorf("prune: building the shrunk network: %w", err)
	}
	old := map[string]*tensor.Tensor{}
	for _, e := range nn.StateEntries(net) {
		old[e.Name] = e.Tensor
	}
	sd := map[string]*tensor.Tensor{}
	for _, e := range nn.StateEntries(small) {
		o, ok := old[e.Name]
		if !ok {
			return nil, nn.Spec{}, fmt.Errorf("prune: the shrunk network has a tensor %q the original has not", e.Name)
		}
		if slices.Equal(o.Shape(), e.Tensor.Shape()) {
			sd[e.Name] = o
			continue
		}
		head, _, _ := strings.Cut(e.Name, ".")
		i, err := strconv.Atoi(head)
		if err != nil || i >= n {
			return nil, nn.Spec{}, fmt.Errorf("prune: tensor %q changed shape but names no layer", e.Name)
		}
		sd[e.Name] = selectRows(o, outKeep[i], inKeep[i])
	}
	if err := nn.LoadStateDict(small, sd, true); err != nil {
		return nil, nn.Spec{}, fmt.Errorf("prune: %w", err)
	}
	small.SetTraining(net.Training())
	return small, newSpec, nil
}

// alive returns the output units of t that are not dead.
func alive(t target) []int {
	w := t.w.Float32s()
	per := len(w) / t.rows
	var perUnit [][]float32 // bias and BatchNorm scale and shift, one value per unit
	for _, v := range []*tensor.Tensor{t.b, bnWeight(t.bn), bnBias(t.bn)} {
		if v != nil {
			perUnit = append(perUnit, v.Float32s())
		}
	}
	var keep []int
	for r := range t.rows {
		live := slices.ContainsFunc(w[r*per:(r+1)*per], func(x float32) bool { return x != 0 })
		for _, v := range perUnit {
			live = live || v[r] != 0
		}
		if live {
			keep = append(keep, r)
		}
	}
	if len(keep) == 0 {
		keep = []int{0} // a layer keeps one unit
	}
	return keep
}

// selectRows returns t with only the rows (dim 0) in rows and, for tensors
// of two or more dims, the columns (dim 1) in cols; nil keeps all.
func selectRows(t *tensor.Tensor, rows, cols []int) *tensor.Tensor {
	shape := t.Shape()
	v := t.Float32s()
	all := func(n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = i
		}
		return s
	}
	if rows == nil {
		rows = all(shape[0])
	}
	inner := 1 // elements per (row, col)
	ncols := 1
	if len(shape) >= 2 {
		ncols = shape[1]
		for _, d := range shape[2:] {
			inner *= d
		}
		if cols == nil {
			cols = all(ncols)
		}
	} else {
		cols = []int{0}
	}
	out := make([]float32, 0, len(rows)*len(cols)*inner)
	for _, r := range rows {
		for _, c := range cols {
			off := (r*ncols + c) * inner
			out = append(out, v[off:off+inner]...)
		}
	}
	ns := slices.Clone(shape)
	ns[0] = len(rows)
	if len(ns) >= 2 {
		ns[1] = len(cols)
	}
	return tensor.FromFloat32(out, ns...)
}
