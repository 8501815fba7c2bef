package train

import (
	"iter"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/tensor"
)

// Strategy is the seam between the training loop and how training is
// spread over processes. The Trainer calls it at the points where a
// data-parallel run (one model replica per process, as PyTorch's
// DistributedDataParallel) differs from a single process:
//
//	Fit:            Setup(model, opt)                  once, before the first step
//	every epoch:    n, batches := Batches(train, epoch, step)
//	every step:     forward, loss, Backward
//	                AfterBackward(params)              then clipping, optimizer step
//	epoch end:      ReduceMetrics(&trainSums)
//	evaluation:     Batches(eval, 0, 0), eval loop, ReduceMetrics(&evalSums)
//	files, hooks:   only where IsMain()
//
// Local is the single-process strategy and the default.
type Strategy interface {
	// Setup prepares the model and optimizer before the first step, after
	// any checkpoint was restored: a data-parallel strategy broadcasts
	// the main process's parameters (and optimizer state) so every
	// replica starts equal.
	Setup(model nn.Layer, opt optim.Optimizer) error
	// Batches returns this process's batches of an epoch of l from batch
	// start on, and how many batches this process sees in the epoch: the
	// whole loader for one process, a disjoint shard per rank for data
	// parallelism (every rank the same number of batches).
	Batches(l *data.Loader, epoch, start int) (n int, batches iter.Seq2[int, *data.Batch])
	// AfterBackward runs after every backward pass, before gradient
	// clipping and the optimizer step: a data-parallel strategy averages
	// the gradients of params over all processes here (all-reduce), so
	// every replica takes the same step.
	AfterBackward(params []*tensor.Tensor) error
	// ReduceMetrics combines the metric sums of all processes in place
	// (an all-reduce of the Accumulator's fields), so the reported
	// training and evaluation metrics cover all the data.
	ReduceMetrics(sums *metrics.Accumulator) error
	// IsMain reports whether this process is the one (rank 0) that writes
	// checkpoints and runs the progress hooks.
	IsMain() bool
}

// beforeBackward is a Strategy that also looks at each step's loss after
// the gradients are zeroed and before Backward (DataParallel: ddp.Prepare,
// which finds the parameters the loss does not reach before any
// communication). It is optional so that Strategy stays as it is; a rank
// whose part of the batch is empty computes no loss and is not called.
type beforeBackward interface {
	BeforeBackward(loss *tensor.Tensor) error
}

// Local is the single-process Strategy: the whole loader, gradients and
// metrics as they are, and this process writes the files.
type Local struct{}

// Setup does nothing.
func (Local) Setup(nn.Layer, optim.Optimizer) error { return nil }

// Batches returns all of l's batches of the epoch from start on.
func (Local) Batches(l *data.Loader, epoch, start int) (int, iter.Seq2[int, *data.Batch]) {
	return l.Len(), l.EpochFrom(epoch, start)
}

// AfterBackward does nothing.
func (Local) AfterBackward([]*tensor.Tensor) error { return nil }

// ReduceMetrics does nothing: this process saw all the data.
func (Local) ReduceMetrics(*metrics.Accumulator) error { return nil }

// IsMain reports true.
func (Local) IsMain() bool { return true }
