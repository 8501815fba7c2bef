package train

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/tensor"
)

// A step is what differs between the ways of training: given batch k of
// nb of the current epoch, it computes the gradients, updates the
// parameters, adds the batch to the epoch's training sums and returns the
// batch's mean loss and the time spent waiting for the gradient
// reduction. Errors come back final (positioned at the epoch and batch).
// New picks the step once; the loop around it (position, hooks,
// checkpoints, evaluation, early stopping) is the same for all.
type stepFunc func(t *Trainer, b *data.Batch, k, nb int, params []*tensor.Tensor) (lv float64, sync time.Duration, err error)

// FullBatch is an optimizer that evaluates the loss itself, several times
// per step, through a closure (optim.LBFGS): the Trainer gives it the
// whole training set as one batch per epoch (Options.FullBatch).
type FullBatch interface {
	// Step runs one update, calling closure (which zeroes the gradients,
	// computes the loss and its gradients and returns the loss) as often
	// as it needs; it returns the loss of the first call.
	Step(closure func() float64) (float64, error)
	ZeroGrad()
	optim.LRController
	State() *optim.StateDict
	LoadState(*optim.StateDict) error
}

// fullBatchOptimizer lets a FullBatch optimizer stand where the loop
// expects an optim.Optimizer (zeroing, learning rate, state); its
// closure-less Step is never called.
type fullBatchOptimizer struct{ FullBatch }

func (fullBatchOptimizer) Step() error {
	return errors.New("train: a full-batch optimizer steps through a closure")
}

// stepErr positions an error of batch k of the current epoch.
func (t *Trainer) stepErr(k int, err error) error {
	return fmt.Errorf("train: epoch %d, batch %d: %w", t.epoch+1, k+1, err)
}

// miniBatchStep is the step of the mini-batch optimizers: forward,
// backward, the strategy's gradient reduction, the optimizer step. A
// data-parallel rank's part of a short last global batch may be empty: it
// computes nothing but still takes part in the step.
func miniBatchStep(t *Trainer, b *data.Batch, k, nb int, params []*tensor.Tensor) (float64, time.Duration, error) {
	var out *tensor.Tensor
	var lv float64
	if b.Size > 0 {
		var err error
		if out, lv, err = t.forwardBackward(b); err != nil {
			var nf *NonFiniteLossError
			if errors.As(err, &nf) {
				nf.Epoch, nf.Batch, nf.Batches = t.epoch+1, k+1, nb
				return lv, 0, nf
			}
			return lv, 0, t.stepErr(k, err)
		}
	} else {
		t.opts.Optimizer.ZeroGrad()
	}
	s0 := time.Now()
	err := t.opts.Strategy.AfterBackward(params)
	sync := time.Since(s0)
	if err != nil {
		return lv, sync, t.stepErr(k, err)
	}
	if err := t.update(b, params); err != nil {
		return lv, sync, t.stepErr(k, err)
	}
	if b.Size > 0 {
		modelfile.AddBatch(&t.partial, lv, out, b)
	}
	return lv, sync, nil
}

// fixedBatchStep is the step of deterministic training
// (Options.MicroShards): the micro-shards' gradients summed in a fixed
// tree (deterministic.go), then the optimizer step.
func fixedBatchStep(t *Trainer, b *data.Batch, k, _ int, params []*tensor.Tensor) (float64, time.Duration, error) {
	lv, err := t.fixedStep(b, k, params)
	if err == nil {
		err = t.update(b, params)
	}
	if err == nil {
		err = t.afterFixedStep()
	}
	if err != nil {
		return lv, 0, t.stepErr(k, err)
	}
	return lv, 0, nil
}

// update unscales (fp16), clips and applies the gradients; an overflow in
// the fp16 gradients skips the step (and shrinks the scale).
func (t *Trainer) update(b *data.Batch, params []*tensor.Tensor) error {
	if t.scaler != nil && b.Size > 0 && !t.scaler.unscale(params) {
		t.opts.Optimizer.ZeroGrad()
		return nil
	}
	if err := t.clip(params); err != nil {
		return err
	}
	return t.opts.Optimizer.Step()
}

// fullBatchStep is the step of a FullBatch optimizer: one Step over the
// whole training set, whose closure runs forward and backward as often as
// the optimizer asks. The epoch's training metrics are those of the
// weights the step ended with.
func fullBatchStep(t *Trainer, b *data.Batch, k, nb int, params []*tensor.Tensor) (float64, time.Duration, error) {
	o := &t.opts
	fb := o.FullBatch
	first, err := fb.Step(func() float64 {
		fb.ZeroGrad()
		l := o.Loss(o.Model.Forward(b.X), b)
		if o.Penalty != nil {
			l = l.Add(o.Penalty())
		}
		l.Backward()
		return l.Item()
	})
	if err != nil {
		return first, 0, t.stepErr(k, err)
	}
	if math.IsNaN(first) || math.IsInf(first, 0) {
		return first, 0, &NonFiniteLossError{Epoch: t.epoch + 1, Batch: k + 1, Batches: nb, Loss: first}
	}
	modelfile.EvalBatches(&t.partial, o.Model, func(yield func(int, *data.Batch) bool) { yield(0, b) }, o.Loss)
	o.Model.SetTraining(true)
	return first, 0, nil
}

// checkFullBatch refuses what a full-batch optimizer cannot combine with
// (it searches its own step length over all the data, in one process) and
// puts it in Optimizer's place.
func checkFullBatch(o *Options) error {
	switch {
	case o.Optimizer != nil:
		return errors.New("train: both an optimizer and a full-batch optimizer")
	case o.Train != nil && o.Train.Len() > 1:
		return fmt.Errorf("train: a full-batch optimizer needs the training set as one batch, the loader has %d", o.Train.Len())
	case o.Schedule != nil, o.ClipGradNorm > 0, o.ClipGradValue > 0:
		return errors.New("train: a full-batch optimizer searches its own step length: no schedule or gradient clipping")
	case o.MicroShards > 0, o.Precision != 0, o.LossScale != nil:
		return errors.New("train: a full-batch optimizer trains in float32 without micro-shards")
	case o.Strategy != nil:
		if _, ok := o.Strategy.(Local); !ok {
			return errors.New("train: a full-batch optimizer trains in one process (Local strategy)")
		}
	}
	o.Optimizer = fullBatchOptimizer{o.FullBatch}
	return nil
}
