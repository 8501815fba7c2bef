package train

import (
	"errors"
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/tensor"
)

// LossScale configures dynamic loss scaling for fp16 training (Micikevicius
// et al., "Mixed Precision Training", ICLR 2018; the schedule of PyTorch's
// GradScaler): the loss is multiplied by Scale before the backward pass so
// that small gradients survive the rounding of backward products to
// binary16, and the gradients are divided by it before the optimizer step.
// A step whose gradients hold an Inf or NaN (an overflow) is skipped and
// the scale multiplied by Backoff; after Interval steps in a row without
// overflow it is multiplied by Growth.
type LossScale struct {
	Init     float64 // initial scale (default 65536)
	Growth   float64 // default 2
	Backoff  float64 // default 0.5
	Interval int     // default 2000
}

// withDefaults fills the zero fields and checks the others.
func (c LossScale) withDefaults() (LossScale, error) {
	if c.Init == 0 {
		c.Init = 65536
	}
	if c.Growth == 0 {
		c.Growth = 2
	}
	if c.Backoff == 0 {
		c.Backoff = 0.5
	}
	if c.Interval == 0 {
		c.Interval = 2000
	}
	switch {
	case !(c.Init > 0) || math.IsInf(c.Init, 0):
		return c, fmt.Errorf("loss scale: initial scale must be positive and finite, got %g", c.Init)
	case !(c.Growth >= 1):
		return c, fmt.Errorf("loss scale: growth factor must be at least 1, got %g", c.Growth)
	case !(c.Backoff > 0 && c.Backoff < 1):
		return c, fmt.Errorf("loss scale: backoff factor must be in (0, 1), got %g", c.Backoff)
	case c.Interval < 1:
		return c, fmt.Errorf("loss scale: growth interval must be at least 1, got %d", c.Interval)
	}
	return c, nil
}

// Validate reports a setting out of range (zero fields take defaults).
func (c LossScale) Validate() error {
	_, err := c.withDefaults()
	return err
}

// lossScaler is the state of dynamic loss scaling.
type lossScaler struct {
	cfg     LossScale
	scale   float64
	good    int // steps since the last overflow or growth
	skipped int // steps skipped so far
}

func newLossScaler(c LossScale) (*lossScaler, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	return &lossScaler{cfg: c, scale: c.Init}, nil
}

// unscale checks the gradients of params (computed from the scaled loss):
// if they are finite it divides them by the scale and reports true; if not
// it backs the scale off and reports false (the step must be skipped).
func (s *lossScaler) unscale(params []*tensor.Tensor) bool {
	n := optim.GradNorm(params, 2)
	if math.IsNaN(n) || math.IsInf(n, 0) {
		s.scale *= s.cfg.Backoff
		s.good = 0
		s.skipped++
		return false
	}
	inv := 1 / s.scale
	for _, p := range params {
		if g := p.Grad(); g != nil {
			g.MulScalarInPlace(inv)
		}
	}
	s.good++
	if s.good >= s.cfg.Interval {
		s.scale *= s.cfg.Growth
		s.good = 0
	}
	return true
}

// LossScaleState reports the current loss scale and the number of steps
// skipped for overflow (0 and 0 unless training with fp16).
func (t *Trainer) LossScaleState() (scale float64, skipped int) {
	if t.scaler == nil {
		return 0, 0
	}
	return t.scaler.scale, t.scaler.skipped
}

// setupPrecision checks Options.Precision and prepares loss scaling.
func (t *Trainer) setupPrecision() error {
	o := &t.opts
	switch o.Precision {
	case tensor.PrecisionFloat32, tensor.PrecisionBF16:
		if o.LossScale != nil {
			return errors.New("train: loss scaling applies to fp16 precision only")
		}
	case tensor.PrecisionFP16:
		s, err := newLossScaler(derefOr(o.LossScale))
		if err != nil {
			return fmt.Errorf("train: %w", err)
		}
		t.scaler = s
	default:
		return fmt.Errorf("train: unknown precision %v", o.Precision)
	}
	if o.Precision != tensor.PrecisionFloat32 && o.MicroShards > 0 {
		return fmt.Errorf("train: %v precision does not combine with deterministic training (micro-shards)", o.Precision)
	}
	return nil
}

func derefOr(c *LossScale) LossScale {
	if c == nil {
		return LossScale{}
	}
	return *c
}

// forwardBackward runs the forward pass, the loss and the backward pass of
// one batch at the configured precision (the autocast switch of package
// tensor is on only meanwhile), scaling the loss for fp16. A non-finite
// loss returns a *NonFiniteLossError (its position left for the caller)
// before any gradient is computed.
func (t *Trainer) forwardBackward(b *data.Batch) (out *tensor.Tensor, lv float64, err error) {
	o := &t.opts
	defer tensor.SetAutocast(tensor.SetAutocast(o.Precision))
	out = o.Model.Forward(b.X)
	loss := o.Loss(out, b)
	lv = loss.Item()
	if math.IsNaN(lv) || math.IsInf(lv, 0) {
		return nil, lv, &NonFiniteLossError{Loss: lv}
	}
	o.Optimizer.ZeroGrad()
	if t.scaler != nil {
		loss = loss.MulScalar(t.scaler.scale)
	}
	if bb, ok := o.Strategy.(beforeBackward); ok {
		if err := bb.BeforeBackward(loss); err != nil {
			return nil, lv, err
		}
	}
	loss.Backward()
	return out, lv, nil
}
