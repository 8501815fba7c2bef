package nn

import (
	"fmt"
	"slices"

	"github.com/fathom-ml/fathom/tensor"
)

// LossFunc maps a model output and a target to a loss.
type LossFunc func(output, target *tensor.Tensor) *tensor.Tensor

// LossSpec describes a loss in a config:
//
//	loss: {type: cross_entropy, label_smoothing: 0.1}
//
// Types: cross_entropy, nll, mse, l1, huber, smooth_l1, bce,
// bce_with_logits (case, '_' and '-' ignored). Fields that a type does not
// use are errors.
type LossSpec struct {
	Type           string    `json:"type" yaml:"type"`
	Reduction      string    `json:"reduction,omitempty" yaml:"reduction,omitempty"` // mean (default), sum, none
	LabelSmoothing float64   `json:"label_smoothing,omitempty" yaml:"label_smoothing,omitempty"`
	IgnoreIndex    *int      `json:"ignore_index,omitempty" yaml:"ignore_index,omitempty"`
	Weight         []float64 `json:"weight,omitempty" yaml:"weight,omitempty"`         // per class (cross_entropy, nll)
	PosWeight      []float64 `json:"pos_weight,omitempty" yaml:"pos_weight,omitempty"` // bce_with_logits
	Delta          float64   `json:"delta,omitempty" yaml:"delta,omitempty"`           // huber, default 1
	Beta           float64   `json:"beta,omitempty" yaml:"beta,omitempty"`             // smooth_l1, default 1
}

var lossFields = map[string][]string{
	"crossentropy":  {"reduction", "label_smoothing", "ignore_index", "weight"},
	"nll":           {"reduction", "ignore_index", "weight"},
	"mse":           {"reduction"},
	"l1":            {"reduction"},
	"huber":         {"reduction", "delta"},
	"smoothl1":      {"reduction", "beta"},
	"bce":           {"reduction"},
	"bcewithlogits": {"reduction", "pos_weight"},
}

// Build returns the loss function the spec describes. Class weights and
// pos_weight are converted to the output's dtype on each call.
func (s LossSpec) Build() (LossFunc, error) {
	typ := normType(s.Type)
	allowed, ok := lossFields[typ]
	if !ok {
		return nil, fmt.Errorf("loss: unknown type %q (want cross_entropy, nll, mse, l1, huber, smooth_l1, bce or bce_with_logits)", s.Type)
	}
	set := map[string]bool{
		"reduction": s.Reduction != "", "label_smoothing": s.LabelSmoothing != 0, "ignore_index": s.IgnoreIndex != nil,
		"weight": s.Weight != nil, "pos_weight": s.PosWeight != nil, "delta": s.Delta != 0, "beta": s.Beta != 0,
	}
	for f, on := range set {
		if on && !slices.Contains(allowed, f) {
			return nil, fmt.Errorf("loss (%s): field %q does not apply", s.Type, f)
		}
	}
	red, err := ParseReduction(s.Reduction)
	if err != nil {
		return nil, fmt.Errorf("loss (%s): %v", s.Type, err)
	}
	if s.LabelSmoothing < 0 || s.LabelSmoothing > 1 {
		return nil, fmt.Errorf("loss (%s): label_smoothing=%g is outside [0, 1]", s.Type, s.LabelSmoothing)
	}
	if s.Delta < 0 || s.Beta < 0 {
		return nil, fmt.Errorf("loss (%s): delta and beta must be positive", s.Type)
	}
	vec := func(v []float64, like *tensor.Tensor) *tensor.Tensor {
		if v == nil {
			return nil
		}
		return tensor.FromFloat64(slices.Clone(v)).To(like.DType())
	}
	class := func(out *tensor.Tensor) ClassOptions {
		o := ClassOptions{Reduction: red, Weight: vec(s.Weight, out), LabelSmoothing: s.LabelSmoothing}
		if s.IgnoreIndex != nil {
			o.Ignore, o.IgnoreIndex = true, *s.IgnoreIndex
		}
		return o
	}
	switch typ {
	case "crossentropy":
		return func(out, y *tensor.Tensor) *tensor.Tensor { return CrossEntropyLoss(out, y, class(out)) }, nil
	case "nll":
		return func(out, y *tensor.Tensor) *tensor.Tensor { return NLLLoss(out, y, class(out)) }, nil
	case "mse":
		return func(out, y *tensor.Tensor) *tensor.Tensor { return MSELoss(out, y, red) }, nil
	case "l1":
		return func(out, y *tensor.Tensor) *tensor.Tensor { return L1Loss(out, y, red) }, nil
	case "huber":
		d := s.Delta
		if d == 0 {
			d = 1
		}
		return func(out, y *tensor.Tensor) *tensor.Tensor { return HuberLoss(out, y, d, red) }, nil
	case "smoothl1":
		b := s.Beta
		if b == 0 {
			b = 1
		}
		return func(out, y *tensor.Tensor) *tensor.Tensor { return SmoothL1Loss(out, y, b, red) }, nil
	case "bce":
		return func(out, y *tensor.Tensor) *tensor.Tensor { return BCELoss(out, y, BCEOptions{Reduction: red}) }, nil
	case "bcewithlogits":
		return func(out, y *tensor.Tensor) *tensor.Tensor {
			return BCEWithLogitsLoss(out, y, BCEOptions{Reduction: red, PosWeight: vec(s.PosWeight, out)})
		}, nil
	}
	return nil, fmt.Errorf("loss: type %q has no builder", s.Type)
}
