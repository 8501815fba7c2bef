package train

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"time"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/runlog"
	"github.com/fathom-ml/fathom/tensor"
)

// LossFunc computes the mean loss of a batch from the model's output. It
// must return a one-element tensor; in training it carries the graph
// Backward walks.
type LossFunc func(out *tensor.Tensor, b *data.Batch) *tensor.Tensor

// CrossEntropy returns the classification loss: cross-entropy of the
// logits [n, C] against the batch's class labels (nn.CrossEntropyLoss).
func CrossEntropy(o nn.ClassOptions) LossFunc {
	return func(out *tensor.Tensor, b *data.Batch) *tensor.Tensor {
		return nn.CrossEntropyLoss(out, b.Labels, o)
	}
}

// MSE returns the regression loss: mean squared error of the predictions
// [n, 1] against the batch's targets (nn.MSELoss).
func MSE() LossFunc {
	return func(out *tensor.Tensor, b *data.Batch) *tensor.Tensor {
		return nn.MSELoss(out, b.Targets, nn.ReduceMean)
	}
}

// EarlyStopping stops training when a monitored metric has not improved
// for Patience epochs in a row.
type EarlyStopping struct {
	// Monitor names the metric, e.g. "val_loss" (the default when Patience
	// is set) or "val_accuracy". Loss and RMSE improve downwards, accuracy
	// upwards.
	Monitor string
	// Patience is the number of epochs without improvement tolerated; 0
	// turns early stopping off.
	Patience int
	// MinDelta is the smallest change that counts as an improvement.
	MinDelta float64
}

// Hooks are callbacks the trainer runs as it goes, for progress bars and
// logs. Any may be nil. They run on the training goroutine: keep them
// quick.
type Hooks struct {
	// EpochStart runs before the first batch of an epoch (1-based) of
	// batches batches.
	EpochStart func(epoch, batches int)
	// Batch runs after each optimizer step.
	Batch func(BatchEvent)
	// EpochEnd runs after an epoch's evaluation; an error stops Fit and is
	// returned by it.
	EpochEnd func(runlog.Epoch) error
}

// BatchEvent describes a finished training step.
type BatchEvent struct {
	Epoch   int     // 1-based
	Batch   int     // 1-based within the epoch
	Batches int     // batches in the epoch
	Step    int     // optimizer steps so far in the run
	Loss    float64 // this batch's mean loss
	LR      float64 // the learning rate of the step (first parameter group)
	Samples int     // examples seen so far in this epoch
	Elapsed time.Duration
	// StepTime is the wall time of the step, from the end of the one
	// before (hooks and checkpoints left out); DataTime the part of it
	// spent waiting for the batch, SyncTime the part spent waiting for the
	// gradient reduction after backward (Strategy.AfterBackward: with
	// DataParallel the all-reduce not hidden behind backward). The rest is
	// computation.
	StepTime, DataTime, SyncTime time.Duration
}

// Options configure a Trainer. Model, Optimizer, Train and Epochs are
// required.
type Options struct {
	// Model is trained in place.
	Model nn.Layer
	// Task picks the default loss and the metrics (Classification by
	// default).
	Task metrics.Task
	// Loss defaults to CrossEntropy for classification and MSE for
	// regression.
	Loss LossFunc
	// Optimizer updates the model's parameters.
	Optimizer optim.Optimizer
	// Schedule, if set, is a schedule over Optimizer counted in epochs
	// (optim.NewStepLR, NewExponentialLR, NewCosineWithWarmup, ...): the
	// trainer moves it to each epoch (Seek) before the epoch's first step,
	// so a resumed run needs no schedule state.
	Schedule *optim.Schedule
	// ClipGradNorm, when positive, rescales the gradients after each
	// backward pass so their global L2 norm is at most this value
	// (optim.ClipGradNorm); a non-finite norm stops training with an error
	// naming the epoch and batch.
	ClipGradNorm float64
	// ClipGradValue, when positive, clamps every gradient element to
	// [−ClipGradValue, ClipGradValue] after each backward pass.
	ClipGradValue float64
	// Train yields the training batches; Eval, if set, the evaluation
	// batches scored after each epoch.
	Train, Eval *data.Loader
	// EvalSplit names the split Eval holds in errors ("validation",
	// "test"); "evaluation" when empty.
	EvalSplit string
	// Epochs is the number of passes over the training data.
	Epochs int
	// EarlyStopping stops before Epochs when a metric stops improving.
	EarlyStopping EarlyStopping
	// CheckpointPath, if set, is where checkpoints are written: every
	// CheckpointEvery optimizer steps (0: only at the end of each epoch),
	// at the end of every epoch, and when Fit is cancelled.
	CheckpointPath  string
	CheckpointEvery int
	// Hooks report progress. They run on the main process only
	// (Strategy.IsMain).
	Hooks Hooks
	// StepReport, if set, runs after each optimizer step on every process
	// (with the step's BatchEvent), for per-process reports such as a
	// dashboard's workers table. It runs on the training goroutine: keep
	// it quick.
	StepReport func(BatchEvent)
	// Strategy runs the per-step work that depends on how training is
	// spread over processes; nil means Local (one process).
	Strategy Strategy
	// MicroShards, when > 0, makes training deterministic across process
	// counts: every global batch is cut into MicroShards micro-shards (a
	// power of two, a multiple of the number of processes) whose
	// gradients are summed in one fixed tree, so 1, 2, 4, ... processes
	// (Local or DataParallel) train bitwise the same weights. It costs
	// MicroShards smaller passes per step and gives up overlapping the
	// all-reduce with backward; see deterministic.go.
	MicroShards int
	// Precision is the arithmetic of the matrix products (MatMul, Linear,
	// Conv2d) of the forward and backward passes: float32 (the zero
	// value), bf16 or fp16 (see tensor.Precision); parameters, optimizer
	// state, reductions and the loss stay float32, as with torch.autocast.
	Precision tensor.Precision
	// LossScale tunes the dynamic loss scaling of fp16 precision (nil: the
	// defaults); it is an error with another precision.
	LossScale *LossScale
	// FullBatch, instead of Optimizer, is an optimizer that trains on the
	// whole training set at once through a closure (optim.LBFGS): Train
	// must then hold the training set as one batch, and every epoch is one
	// FullBatch step. Its training metrics are those of the weights the
	// step ended with.
	FullBatch FullBatch
	// Penalty, if set (with FullBatch only), is added to the loss the
	// full-batch closure minimizes, such as an L2 penalty on the weights;
	// the reported losses leave it out.
	Penalty func() *tensor.Tensor
}

// Trainer runs the training loop of a model: epochs of mini-batch steps,
// evaluation after each epoch, metrics, early stopping and checkpoints
// with resume. Build one with New, optionally LoadCheckpoint, then Fit.
type Trainer struct {
	opts  Options
	setup bool // Strategy.Setup has run

	// position: the next step to run is step of epoch (both 0-based)
	epoch, step int
	globalStep  int
	partial     metrics.Accumulator // the current epoch's training sums so far
	partialSec  float64
	history     []runlog.Epoch
	best        float64     // best monitored value so far
	bad         int         // epochs since it improved
	stopped     bool        // early stopping fired
	fixed       *fixedState // deterministic training (Options.MicroShards)
	stepFn      stepFunc    // the step of this way of training (step.go)
	scaler      *lossScaler // fp16 loss scaling (Options.Precision)
	lossUnknown bool        // this process does not know the last step's loss (Stepper)
}

// New checks the options and returns a trainer positioned at the start.
func New(opts Options) (*Trainer, error) {
	if opts.FullBatch != nil {
		if err := checkFullBatch(&opts); err != nil {
			return nil, err
		}
	}
	switch {
	case opts.Model == nil:
		return nil, errors.New("train: no model")
	case opts.Penalty != nil && opts.FullBatch == nil:
		return nil, errors.New("train: a loss penalty needs a full-batch optimizer")
	case opts.Optimizer == nil:
		return nil, errors.New("train: no optimizer")
	case opts.Train == nil:
		return nil, errors.New("train: no training data")
	case opts.Epochs < 0:
		return nil, fmt.Errorf("train: epochs must not be negative, got %d", opts.Epochs)
	case opts.CheckpointEvery < 0:
		return nil, fmt.Errorf("train: checkpoint interval must not be negative, got %d", opts.CheckpointEvery)
	}
	ds := opts.Train.Dataset()
	switch opts.Task {
	case metrics.Classification:
		if !ds.HasLabels() {
			return nil, errors.New("train: classification needs class labels in the training data")
		}
		if opts.Loss == nil {
			opts.Loss = CrossEntropy(nn.ClassOptions{})
		}
	case metrics.Regression:
		if !ds.HasTargets() {
			return nil, errors.New("train: regression needs numeric targets in the training data")
		}
		if opts.Loss == nil {
			opts.Loss = MSE()
		}
	default:
		return nil, fmt.Errorf("train: unknown task %v", opts.Task)
	}
	es := &opts.EarlyStopping
	if es.Patience < 0 {
		return nil, fmt.Errorf("train: early-stopping patience must not be negative, got %d", es.Patience)
	}
	if es.Patience > 0 {
		if es.Monitor == "" {
			es.Monitor = "val_loss"
			if opts.Eval == nil {
				es.Monitor = "train_loss"
			}
		}
		if err := runlog.CheckMonitor(es.Monitor); err != nil {
			return nil, fmt.Errorf("train: early stopping: %w", err)
		}
		if opts.Eval == nil && !runlog.IsTrainMetric(es.Monitor) {
			return nil, fmt.Errorf("train: early stopping monitors %q but there is no evaluation data", es.Monitor)
		}
	}
	if opts.Strategy == nil {
		opts.Strategy = Local{}
	}
	t := &Trainer{opts: opts, partial: metrics.Accumulator{Task: opts.Task}, stepFn: miniBatchStep}
	switch {
	case opts.FullBatch != nil:
		t.stepFn = fullBatchStep
	case opts.MicroShards > 0:
		t.stepFn = fixedBatchStep
	}
	if _, ok := opts.Strategy.(Stepper); ok {
		if opts.FullBatch != nil || opts.MicroShards > 0 || opts.Precision != 0 || opts.LossScale != nil {
			return nil, errors.New("train: a strategy that runs the passes itself (Stepper) trains in float32 with a mini-batch optimizer, without micro-shards")
		}
		t.stepFn = stepperStep
	}
	if err := t.setupPrecision(); err != nil {
		return nil, err
	}
	t.best = math.Inf(1)
	if runlog.HigherIsBetter(es.Monitor) {
		t.best = math.Inf(-1)
	}
	return t, nil
}

// History returns the results of the epochs run so far (including those
// restored from a checkpoint).
func (t *Trainer) History() []runlog.Epoch { return append([]runlog.Epoch(nil), t.history...) }

// Position returns the next epoch and step (0-based) Fit will run, and
// the number of optimizer steps taken so far.
func (t *Trainer) Position() (epoch, step, globalStep int) { return t.epoch, t.step, t.globalStep }

// NonFiniteLossError is returned by Fit when a batch's loss is NaN or
// infinite: training diverged (learning rate too high, bad inputs).
type NonFiniteLossError struct {
	Epoch, Batch, Batches int // 1-based epoch and batch
	Loss                  float64
}

func (e *NonFiniteLossError) Error() string {
	return fmt.Sprintf("train: loss is %v at epoch %d, batch %d of %d: training diverged (lower the learning rate or check the inputs for NaN/Inf)",
		e.Loss, e.Epoch, e.Batch, e.Batches)
}

// NonFiniteEvalLossError is returned by Fit when the loss on the
// evaluation split is NaN or infinite after an epoch: the model (or the
// evaluation data) holds non-finite values, and going on would select or
// save a broken model.
type NonFiniteEvalLossError struct {
	Epoch int // 1-based
	Split string
	Loss  float64
}

func (e *NonFiniteEvalLossError) Error() string {
	return fmt.Sprintf("train: %s loss is %v after epoch %d: the model or the %s data holds NaN/Inf (check the inputs, lower the learning rate)",
		e.Split, e.Loss, e.Epoch, e.Split)
}

// Fit trains until Epochs epochs are done, early stopping fires, a hook
// fails or ctx is cancelled, and returns the history of all epochs. After
// LoadCheckpoint it continues where the checkpoint left off. When ctx is
// cancelled it writes a checkpoint (if a path is set) and returns an
// error wrapping ctx.Err().
func (t *Trainer) Fit(ctx context.Context) ([]runlog.Epoch, error) {
	if !t.setup {
		setup := func() error { return t.opts.Strategy.Setup(t.opts.Model, t.opts.Optimizer) }
		if t.opts.MicroShards > 0 {
			setup = t.setupFixed
		}
		if err := setup(); err != nil {
			return t.History(), fmt.Errorf("train: %w", err)
		}
		t.setup = true
	}
	main := t.opts.Strategy.IsMain()
	for t.epoch < t.opts.Epochs && !t.stopped {
		res, err := t.runEpoch(ctx)
		if err != nil {
			return t.History(), err
		}
		t.history = append(t.history, res)
		t.epoch, t.step = t.epoch+1, 0
		t.partial, t.partialSec = metrics.Accumulator{Task: t.opts.Task}, 0
		if es := t.opts.EarlyStopping; es.Patience > 0 {
			v, err := res.Monitored(es.Monitor)
			if err != nil {
				return t.History(), fmt.Errorf("train: early stopping: %w", err)
			}
			better := v < t.best-es.MinDelta
			if runlog.HigherIsBetter(es.Monitor) {
				better = v > t.best+es.MinDelta
			}
			if better {
				t.best, t.bad = v, 0
			} else if t.bad++; t.bad >= es.Patience {
				t.stopped = true
			}
		}
		if _, sharded := t.opts.Strategy.(ShardedCheckpoints); t.opts.CheckpointPath != "" && (main || sharded) {
			if err := t.SaveCheckpoint(t.opts.CheckpointPath); err != nil {
				return t.History(), err
			}
		}
		if h := t.opts.Hooks.EpochEnd; h != nil && main {
			if err := h(res); err != nil {
				return t.History(), err
			}
		}
	}
	return t.History(), nil
}

// Stopped reports whether early stopping ended the run.
func (t *Trainer) Stopped() bool { return t.stopped }

// runEpoch trains one epoch from the current position and evaluates.
func (t *Trainer) runEpoch(ctx context.Context) (runlog.Epoch, error) {
	o := &t.opts
	opt := o.Optimizer
	st := o.Strategy
	main := st.IsMain()
	epoch := t.epoch
	if o.Schedule != nil {
		o.Schedule.Seek(epoch)
	}
	nb, batches := st.Batches(o.Train, epoch, t.step)
	if h := o.Hooks.EpochStart; h != nil && main {
		h(epoch+1, nb)
	}
	o.Model.SetTraining(true)
	params := o.Model.Parameters()
	start := time.Now()
	mark := start // the end of the step before
	for k, b := range batches {
		fetched := time.Now()
		if err := ctx.Err(); err != nil {
			t.partialSec += time.Since(start).Seconds()
			return runlog.Epoch{}, t.interrupted(err)
		}
		lv, sync, err := t.stepFn(t, b, k, nb, params)
		if err != nil {
			return runlog.Epoch{}, err
		}
		t.step = k + 1
		t.globalStep++
		report := main && b.Size > 0 && !t.lossUnknown
		if h := o.Hooks.Batch; (h != nil && report) || o.StepReport != nil {
			now := time.Now()
			e := BatchEvent{Epoch: epoch + 1, Batch: k + 1, Batches: nb, Step: t.globalStep, Loss: lv,
				LR: opt.LR(0), Samples: t.partial.N, Elapsed: now.Sub(start) + time.Duration(t.partialSec*float64(time.Second)),
				StepTime: now.Sub(mark), DataTime: fetched.Sub(mark), SyncTime: sync}
			if h != nil && report {
				h(e)
			}
			if o.StepReport != nil {
				o.StepReport(e)
			}
		}
		if o.CheckpointPath != "" && o.CheckpointEvery > 0 && t.globalStep%o.CheckpointEvery == 0 && t.step < nb {
			sec := time.Since(start).Seconds()
			t.partialSec += sec
			err := t.checkpointMidEpoch(o.CheckpointPath)
			t.partialSec -= sec
			if err != nil {
				return runlog.Epoch{}, err
			}
		}
		mark = time.Now()
	}
	sums := t.partial // this process's sums stay as they are for checkpoints
	if err := st.ReduceMetrics(&sums); err != nil {
		return runlog.Epoch{}, fmt.Errorf("train: epoch %d: %w", epoch+1, err)
	}
	res := runlog.Epoch{
		Epoch:   epoch + 1,
		Train:   sums.Metrics(),
		LR:      opt.LR(0),
		Seconds: t.partialSec + time.Since(start).Seconds(),
		Steps:   t.globalStep,
	}
	if o.Eval != nil {
		es := time.Now()
		m, err := t.evaluate()
		if err != nil {
			return runlog.Epoch{}, fmt.Errorf("train: evaluating after epoch %d: %w", epoch+1, err)
		}
		if math.IsNaN(m.Loss) || math.IsInf(m.Loss, 0) {
			split := o.EvalSplit
			if split == "" {
				split = "evaluation"
			}
			return runlog.Epoch{}, &NonFiniteEvalLossError{Epoch: epoch + 1, Split: split, Loss: m.Loss}
		}
		res.Eval = &m
		res.EvalSeconds = time.Since(es).Seconds()
	}
	return res, nil
}

// checkpointMidEpoch writes a checkpoint within an epoch, on every
// process: the checkpoint holds the epoch's training sums of all
// processes so far (ReduceMetrics), so that a run resumed from it, in
// which every process loads it and only the main one keeps the sums
// (LoadCheckpoint), counts each example once.
//
// With a ShardedCheckpoints strategy every process writes its own sums in
// its part instead.
func (t *Trainer) checkpointMidEpoch(path string) error {
	if _, ok := t.opts.Strategy.(ShardedCheckpoints); ok {
		return t.SaveCheckpoint(path)
	}
	sums := t.partial
	if err := t.opts.Strategy.ReduceMetrics(&sums); err != nil {
		return fmt.Errorf("train: checkpoint at epoch %d, step %d: %w", t.epoch+1, t.step, err)
	}
	if !t.opts.Strategy.IsMain() {
		return nil
	}
	local := t.partial
	t.partial = sums
	defer func() { t.partial = local }()
	return t.SaveCheckpoint(path)
}

// interrupted checkpoints a cancelled run and wraps the context error.
// Unlike checkpointMidEpoch it does not reduce the epoch's metric sums over
// the processes: under DataParallel the cancellation reaches ranks at
// different steps (a rank may already wait in this step's gradient
// all-reduce), so a collective here could be matched against the wrong
// one. The checkpoint holds the main process's sums; docs/distributed.md
// describes the effect on the resumed epoch's training metrics.
//
// With a ShardedCheckpoints strategy it writes none: the parts must be
// written at the same step on every process. A resumed run starts from
// the last committed checkpoint.
func (t *Trainer) interrupted(cause error) error {
	_, sharded := t.opts.Strategy.(ShardedCheckpoints)
	if t.opts.CheckpointPath != "" && t.opts.Strategy.IsMain() && !sharded {
		if err := t.SaveCheckpoint(t.opts.CheckpointPath); err != nil {
			return errors.Join(fmt.Errorf("train: interrupted at epoch %d, step %d: %w", t.epoch+1, t.step, cause), err)
		}
		return fmt.Errorf("train: interrupted at epoch %d, step %d (checkpoint written to %s): %w", t.epoch+1, t.step, t.opts.CheckpointPath, cause)
	}
	return fmt.Errorf("train: interrupted at epoch %d, step %d: %w", t.epoch+1, t.step, cause)
}

// evaluate scores the model on this process's share of the evaluation
// data (the evaluation loop of package modelfile) and combines the sums
// of all processes.
func (t *Trainer) evaluate() (metrics.Metrics, error) {
	o := &t.opts
	if err := modelfile.CheckTargets(o.Eval.Dataset(), o.Task); err != nil {
		return metrics.Metrics{}, err
	}
	acc := metrics.Accumulator{Task: o.Task}
	if sp, ok := o.Strategy.(Stepper); ok {
		o.Model.SetTraining(false)
		if err := sp.Evaluate(o.Eval, o.Loss, &acc); err != nil {
			return metrics.Metrics{}, err
		}
	} else {
		_, batches := o.Strategy.Batches(o.Eval, 0, 0)
		modelfile.EvalBatches(&acc, o.Model, nonEmpty(batches), o.Loss)
	}
	if err := o.Strategy.ReduceMetrics(&acc); err != nil {
		return metrics.Metrics{}, err
	}
	return acc.Metrics(), nil
}

// clip applies the configured gradient clipping to the model's parameters.
func (t *Trainer) clip(params []*tensor.Tensor) error {
	o := &t.opts
	if o.ClipGradNorm <= 0 && o.ClipGradValue <= 0 {
		return nil
	}
	if o.ClipGradValue > 0 {
		if err := optim.ClipGradValue(params, o.ClipGradValue); err != nil {
			return err
		}
	}
	if o.ClipGradNorm > 0 {
		if _, err := optim.ClipGradNorm(params, o.ClipGradNorm, 2); err != nil {
			return fmt.Errorf("clipping gradients: %w", err)
		}
	}
	return nil
}

// nonEmpty leaves out the empty batches of a data-parallel rank's shard
// (the mean loss of no rows is NaN).
func nonEmpty(batches iter.Seq2[int, *data.Batch]) iter.Seq2[int, *data.Batch] {
	return func(yield func(int, *data.Batch) bool) {
		for k, b := range batches {
			if b.Size > 0 && !yield(k, b) {
				return
			}
		}
	}
}
