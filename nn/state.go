package nn

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fathom-ml/fathom/tensor"
)

// StateDict returns every parameter and buffer of the module tree by
// dotted name (PyTorch's state_dict). The tensors are detached views that
// share storage with the model: writing into them changes the model.
func StateDict(m Module) map[string]*tensor.Tensor {
	sd := map[string]*tensor.Tensor{}
	for _, e := range StateEntries(m) {
		sd[e.Name] = e.Tensor.Detach()
	}
	return sd
}

// StateEntries lists the state dict's tensors in its one order:
// parameters then buffers, each in registration (walk) order, with a
// tensor registered under several names listed under each of them. Model
// files, checkpoints and weight fingerprints all use this order.
func StateEntries(m Module) []Named {
	var out []Named
	for _, buffers := range []bool{false, true} {
		walk(m, "", buffers, func(name string, p **tensor.Tensor) {
			out = append(out, Named{name, *p})
		})
	}
	return out
}

// ShapeMismatch is a state dict entry whose shape differs from the model's.
type ShapeMismatch struct {
	Key         string
	Model, Dict []int
}

// StateDictError lists everything LoadStateDict found wrong.
type StateDictError struct {
	Missing    []string // in the model, not in the dict (strict only)
	Unexpected []string // in the dict, not in the model (strict only)
	Mismatched []ShapeMismatch
}

func (e *StateDictError) Error() string {
	var parts []string
	if len(e.Missing) > 0 {
		parts = append(parts, "missing keys: "+strings.Join(e.Missing, ", "))
	}
	if len(e.Unexpected) > 0 {
		parts = append(parts, "unexpected keys: "+strings.Join(e.Unexpected, ", "))
	}
	for _, m := range e.Mismatched {
		parts = append(parts, fmt.Sprintf("size mismatch for %s: state dict has shape %v, model has %v", m.Key, m.Dict, m.Model))
	}
	return "nn: loading state dict: " + strings.Join(parts, "; ")
}

// LoadStateDict copies the tensors of sd into the model's parameters and
// buffers of the same names, converting dtypes. With strict, every model
// tensor must be in sd and every key of sd in the model. A key present on
// both sides with different shapes is always an error. Nothing is copied
// unless everything checks out; the error is a *StateDictError naming every
// problem. Parameters are updated in place, so optimizers holding them
// see the loaded values.
func LoadStateDict(m Module, sd map[string]*tensor.Tensor, strict bool) error {
	entries := StateEntries(m)
	e := &StateDictError{}
	inModel := map[string]bool{}
	for _, en := range entries {
		inModel[en.Name] = true
		src, ok := sd[en.Name]
		if !ok {
			if strict {
				e.Missing = append(e.Missing, en.Name)
			}
			continue
		}
		if !slices.Equal(src.Shape(), en.Tensor.Shape()) {
			e.Mismatched = append(e.Mismatched, ShapeMismatch{en.Name, en.Tensor.Shape(), src.Shape()})
		}
	}
	if strict {
		for k := range sd {
			if !inModel[k] {
				e.Unexpected = append(e.Unexpected, k)
			}
		}
		slices.Sort(e.Unexpected)
	}
	if len(e.Missing)+len(e.Unexpected)+len(e.Mismatched) > 0 {
		return e
	}
	for _, en := range entries {
		if src, ok := sd[en.Name]; ok {
			en.Tensor.CopyFrom(src.Detach())
		}
	}
	forEachModule(m, func(x Module) {
		if q, ok := x.(qstate); ok {
			q.state().stateLoaded()
		}
	})
	return nil
}
