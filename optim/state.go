package optim

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fathom-ml/fathom/tensor"
)

// StateDict is an optimizer's state in a form a checkpoint can store: named
// tensors (for a safetensors file) and JSON-friendly metadata, after
// PyTorch's optimizer state_dict.
//
// Per-parameter entries are keyed "<index>.<name>", where index is the
// parameter's position in the optimizer's parameter list (groups in order,
// parameters in order within a group), for example "3.exp_avg" or
// "0.momentum_buffer" in Tensors and "3.step" in Scalars. Entries that
// belong to the optimizer as a whole (L-BFGS) have no index.
type StateDict struct {
	// Optimizer names the kind of optimizer ("SGD", "Adam", ...).
	Optimizer string `json:"optimizer"`
	// Groups holds each parameter group's parameter indices and
	// hyperparameters ("lr", "weight_decay", "momentum", "beta1", ...;
	// booleans are 0 or 1).
	Groups []GroupState `json:"param_groups"`
	// Scalars holds step counts and other numbers.
	Scalars map[string]float64 `json:"scalars,omitempty"`
	// Tensors holds buffers (momentum, moment estimates, ...), each with
	// its parameter's shape and dtype. The checkpoint code writes them to
	// safetensors; they are not part of the JSON encoding.
	Tensors map[string]*tensor.Tensor `json:"-"`
}

// GroupState is one parameter group in a StateDict.
type GroupState struct {
	Params []int              `json:"params"`
	Hyper  map[string]float64 `json:"hyper"`
}

// TensorNames returns the keys of Tensors in sorted order, for writing
// files deterministically.
func (s *StateDict) TensorNames() []string {
	names := make([]string, 0, len(s.Tensors))
	for k := range s.Tensors {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func newStateDict(name string) *StateDict {
	return &StateDict{Optimizer: name, Scalars: map[string]float64{}, Tensors: map[string]*tensor.Tensor{}}
}

func paramKey(i int, name string) string { return strconv.Itoa(i) + "." + name }

// putTensor stores a copy of t under key.
func (s *StateDict) putTensor(key string, t *tensor.Tensor) {
	if t != nil {
		s.Tensors[key] = t.Detach().Clone()
	}
}

// bool01 encodes a flag as a hyperparameter.
func bool01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// saveGroups writes the groups with their lr, weight decay and the
// optimizer-wide hyperparameters in hyper.
func (b *base) saveGroups(s *StateDict, hyper map[string]float64) {
	for _, g := range b.groups {
		h := map[string]float64{"lr": g.lr, "weight_decay": g.weightDecay}
		for k, v := range hyper {
			h[k] = v
		}
		s.Groups = append(s.Groups, GroupState{Params: append([]int(nil), g.idx...), Hyper: h})
	}
}

// loadGroups verifies that s was saved by an optimizer of this kind over
// the same group layout, and returns the first group's hyperparameters.
// It restores each group's lr and weight decay.
func (b *base) loadGroups(s *StateDict) (map[string]float64, error) {
	if s == nil {
		return nil, fmt.Errorf("optim: %s: LoadState with a nil state", b.name)
	}
	if s.Optimizer != b.name {
		return nil, fmt.Errorf("optim: %s: LoadState with the state of a %s optimizer", b.name, s.Optimizer)
	}
	if len(s.Groups) != len(b.groups) {
		return nil, fmt.Errorf("optim: %s: LoadState: state has %d parameter groups, optimizer has %d", b.name, len(s.Groups), len(b.groups))
	}
	for gi, gs := range s.Groups {
		g := b.groups[gi]
		if len(gs.Params) != len(g.idx) {
			return nil, fmt.Errorf("optim: %s: LoadState: group %d has %d parameters in the state, %d in the optimizer", b.name, gi, len(gs.Params), len(g.idx))
		}
		for j, i := range gs.Params {
			if i != g.idx[j] {
				return nil, fmt.Errorf("optim: %s: LoadState: group %d lists parameter %d at position %d, optimizer has %d", b.name, gi, i, j, g.idx[j])
			}
		}
		for _, k := range []string{"lr", "weight_decay"} {
			v, ok := gs.Hyper[k]
			if !ok || math.IsNaN(v) || v < 0 {
				return nil, fmt.Errorf("optim: %s: LoadState: group %d: missing or invalid %q", b.name, gi, k)
			}
		}
	}
	// Check every tensor before changing anything.
	for k, t := range s.Tensors {
		i, _, ok := splitKey(k)
		if !ok {
			continue
		}
		if i < 0 || i >= len(b.params) {
			return nil, fmt.Errorf("optim: %s: LoadState: tensor %q names parameter %d of %d", b.name, k, i, len(b.params))
		}
		if t == nil || !slices.Equal(t.Shape(), b.params[i].Shape()) {
			return nil, fmt.Errorf("optim: %s: LoadState: tensor %q has shape %v, parameter %d has shape %v", b.name, k, shapeOf(t), i, b.params[i].Shape())
		}
	}
	for gi, gs := range s.Groups {
		b.groups[gi].lr = gs.Hyper["lr"]
		b.groups[gi].weightDecay = gs.Hyper["weight_decay"]
	}
	if len(s.Groups) == 0 {
		return map[string]float64{}, nil
	}
	return s.Groups[0].Hyper, nil
}

func shapeOf(t *tensor.Tensor) []int {
	if t == nil {
		return nil
	}
	return t.Shape()
}

// splitKey splits "<index>.<name>".
func splitKey(k string) (int, string, bool) {
	dot := strings.IndexByte(k, '.')
	if dot <= 0 {
		return 0, "", false
	}
	i, err := strconv.Atoi(k[:dot])
	if err != nil {
		return 0, "", false
	}
	return i, k[dot+1:], true
}

// paramBuffer returns a copy of the saved buffer name of parameter i,
// converted to the parameter's dtype, or nil if the state has none.
func (b *base) paramBuffer(s *StateDict, i int, name string) *tensor.Tensor {
	t, ok := s.Tensors[paramKey(i, name)]
	if !ok || t == nil {
		return nil
	}
	p := b.params[i]
	out := tensor.ZerosLike(p)
	out.CopyFrom(t.Detach().Reshape(p.Shape()...))
	return out
}

// hyperValue reads a hyperparameter saved with the state; it keeps def
// when the state does not hold it.
func hyperValue(h map[string]float64, name string, def float64) float64 {
	if v, ok := h[name]; ok {
		return v
	}
	return def
}
