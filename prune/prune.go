package prune

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// Scope says how Magnitude ranks weights.
type Scope int

const (
	// PerLayer prunes the same fraction of every layer.
	PerLayer Scope = iota
	// Global ranks the weights of all layers together.
	Global
)

// Norm is the size of a neuron or channel in Structured pruning.
type Norm int

const (
	// L1 is the sum of the absolute values of its weights.
	L1 Norm = iota
	// L2 is the Euclidean norm of its weights.
	L2
)

// ErrSparsity is returned for a sparsity outside [0, 1).
var ErrSparsity = errors.New("prune: sparsity must be in [0, 1)")

// target is a prunable layer of a Sequential.
type target struct {
	index int // in the Sequential
	name  string
	w, b  *tensor.Tensor
	rows  int           // output units
	bn    *nn.BatchNorm // a BatchNorm on the outputs, or nil
	next  int           // index of the next Linear/Conv2d, -1 for the last
}

// targets lists the Linear and Conv2d layers of net with their following
// BatchNorm and the next prunable layer.
func targets(net *nn.Sequential) ([]target, error) {
	var ts []target
	for i := 0; i < net.Len(); i++ {
		var t target
		switch l := net.At(i).(type) {
		case *nn.Linear:
			t = target{index: i, name: fmt.Sprintf("layer %d (linear)", i), w: l.Weight, b: l.Bias, rows: l.Out}
		case *nn.Conv2d:
			t = target{index: i, name: fmt.Sprintf("layer %d (conv2d)", i), w: l.Weight, b: l.Bias, rows: l.Weight.Shape()[0]}
		default:
			continue
		}
		if t.w.DType() != tensor.Float32 {
			return nil, fmt.Errorf("prune: %s has %v weights; only float32 is supported", t.name, t.w.DType())
		}
		t.next = -1
		ts = append(ts, t)
	}
	for k := range ts {
		if k+1 < len(ts) {
			ts[k].next = ts[k+1].index
		}
	}
	return ts, nil
}

// Masks keeps pruned weights at zero: Apply multiplies every masked tensor
// by its 0/1 mask.
type Masks struct {
	entries []mask
}

type mask struct {
	t    *tensor.Tensor
	keep []bool // per element
}

// Apply zeroes the pruned weights again (after an optimizer step).
func (m *Masks) Apply() {
	if m == nil {
		return
	}
	for _, e := range m.entries {
		v := e.t.Float32s()
		for i, k := range e.keep {
			if !k {
				v[i] = 0
			}
		}
	}
}

// Sparsity returns the fraction of the masked weights that are pruned
// (bias and BatchNorm entries of structured pruning not counted).
func (m *Masks) Sparsity() float64 {
	var n, z int
	for _, e := range m.entries {
		if len(e.t.Shape()) < 2 {
			continue
		}
		for _, k := range e.keep {
			n++
			if !k {
				z++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return float64(z) / float64(n)
}

// Magnitude prunes the fraction sparsity of the weights of every Linear and
// Conv2d of net with the smallest magnitudes (per layer or over all
// layers), sets them to zero and returns the masks that keep them there.
// Ties are broken by position, so exactly ⌊sparsity·n⌋ weights go.
func Magnitude(net *nn.Sequential, sparsity float64, scope Scope) (*Masks, error) {
	if !(sparsity >= 0 && sparsity < 1) {
		return nil, fmt.Errorf("%w, got %g", ErrSparsity, sparsity)
	}
	ts, err := targets(net)
	if err != nil {
		return nil, err
	}
	if len(ts) == 0 {
		return nil, errors.New("prune: the network has no Linear or Conv2d layer")
	}
	m := &Masks{}
	switch scope {
	case PerLayer:
		for _, t := range ts {
			v := t.w.Float32s()
			keep := smallestOut([][]float32{v}, sparsity)
			m.entries = append(m.entries, mask{t: t.w, keep: keep[0]})
		}
	case Global:
		vs := make([][]float32, len(ts))
		for i, t := range ts {
			vs[i] = t.w.Float32s()
		}
		for i, keep := range smallestOut(vs, sparsity) {
			m.entries = append(m.entries, mask{t: ts[i].w, keep: keep})
		}
	default:
		return nil, fmt.Errorf("prune: unknown scope %d", scope)
	}
	m.Apply()
	return m, nil
}

// smallestOut returns keep masks for the slices vs that drop the
// ⌊sparsity·n⌋ elements of smallest magnitude among all n of them.
func smallestOut(vs [][]float32, sparsity float64) [][]bool {
	type ref struct {
		abs  float32
		s, i int32
	}
	var all []ref
	keep := make([][]bool, len(vs))
	for s, v := range vs {
		keep[s] = make([]bool, len(v))
		for i, x := range v {
			keep[s][i] = true
			all = append(all, ref{float32(math.Abs(float64(x))), int32(s), int32(i)})
		}
	}
	drop := int(sparsity * float64(len(all)))
	slices.SortFunc(all, func(a, b ref) int {
		switch {
		case a.abs < b.abs:
			return -1
		case a.abs > b.abs:
			return 1
		case a.s != b.s:
			return int(a.s - b.s)
		}
		return int(a.i - b.i)
	})
	for _, r := range all[:drop] {
		keep[r.s][r.i] = false
	}
	return keep
}

// Structured prunes the fraction sparsity of the output units (neurons of
// a Linear, channels of a Conv2d) of every prunable layer but the last,
// those of smallest norm, with their bias and the scale and shift of a
// BatchNorm on them; every layer keeps at least one unit. It returns the
// masks (see Shrink for removing the units).
func Structured(net *nn.Sequential, sparsity float64, norm Norm) (*Masks, error) {
	if !(sparsity >= 0 && sparsity < 1) {
		return nil, fmt.Errorf("%w, got %g", ErrSparsity, sparsity)
	}
	ts, err := chain(net)
	if err != nil {
		return nil, err
	}
	m := &Masks{}
	for _, t := range ts {
		if t.next < 0 {
			break
		}
		w := t.w.Float32s()
		per := len(w) / t.rows
		norms := make([]float64, t.rows)
		for r := range norms {
			for _, x := range w[r*per : (r+1)*per] {
				if norm == L2 {
					norms[r] += float64(x) * float64(x)
				} else {
					norms[r] += math.Abs(float64(x))
				}
			}
		}
		order := make([]int, t.rows)
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			switch {
			case norms[a] < norms[b]:
				return -1
			case norms[a] > norms[b]:
				return 1
			}
			return 0
		})
		drop := min(int(sparsity*float64(t.rows)), t.rows-1)
		rowKeep := make([]bool, t.rows)
		for _, r := range order[drop:] {
			rowKeep[r] = true
		}
		m.entries = append(m.entries, mask{t: t.w, keep: expandRows(rowKeep, per)})
		for _, v := range []*tensor.Tensor{t.b, bnWeight(t.bn), bnBias(t.bn)} {
			if v != nil {
				m.entries = append(m.entries, mask{t: v, keep: rowKeep})
			}
		}
	}
	m.Apply()
	return m, nil
}

func bnWeight(b *nn.BatchNorm) *tensor.Tensor {
	if b == nil {
		return nil
	}
	return b.Weight
}

func bnBias(b *nn.BatchNorm) *tensor.Tensor {
	if b == nil {
		return nil
	}
	return b.Bias
}

// expandRows repeats each row's flag per times.
func expandRows(rows []bool, per int) []bool {
	out := make([]bool, 0, len(rows)*per)
	for _, k := range rows {
		for range per {
			out = append(out, k)
		}
	}
	return out
}

// chain returns the prunable layers of net after checking that only layers
// mapping zero to zero stand between them, and finds each one's BatchNorm.
func chain(net *nn.Sequential) ([]target, error) {
	ts, err := targets(net)
	if err != nil {
		return nil, err
	}
	if len(ts) < 2 {
		return nil, errors.New("prune: structured pruning needs at least two Linear or Conv2d layers (the last one's outputs are kept)")
	}
	for k := range ts {
		t := &ts[k]
		if c, ok := net.At(t.index).(*nn.Conv2d); ok && c.Groups > 1 {
			return nil, fmt.Errorf("prune: %s is a grouped convolution (groups %d): structured pruning supports groups 1 only", t.name, c.Groups)
		}
		if t.next < 0 {
			break
		}
		for i := t.index + 1; i < t.next; i++ {
			switch l := net.At(i).(type) {
			case *nn.ReLU, *nn.LeakyReLU, *nn.Tanh, *nn.GELU, *nn.Dropout, *nn.MaxPool2d, *nn.AvgPool2d, *nn.Flatten, *nn.Identity:
			case *nn.BatchNorm:
				if t.bn != nil {
					return nil, fmt.Errorf("prune: two BatchNorms after %s", t.name)
				}
				t.bn = l
			default:
				return nil, fmt.Errorf("prune: layer %d (%T) between %s and layer %d does not map zero to zero: structured pruning cannot remove units through it", i, l, t.name, t.next)
			}
		}
	}
	return ts, nil
}
