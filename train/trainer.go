package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
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

// Schedule gives the learning rate of an epoch (0-based) as a factor of
// the optimizer's initial learning rate; see StepDecay, ExponentialDecay
// and CosineDecay. It is a pure function of the epoch, so a resumed run
// needs no schedule state.
type Schedule func(epoch int) float64

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
	EpochEnd func(EpochResult) error
}

// BatchEvent describes a finished training step.
type BatchEvent struct {
	Epoch   int     // 1-based
	Batch   int     // 1-based within the epoch
	Batches int     // batches in the epoch
	Step    int     // optimizer steps so far in the run
	Loss    float64 // this batch's mean loss
	Samples int     // examples seen so far in this epoch
	Elapsed time.Duration
}

// Options configure a Trainer. Model, Optimizer, Train and Epochs are
// required.
type Options struct {
	// Model is trained in place.
	Model nn.Layer
	// Task picks the default loss and the metrics (Classification by
	// default).
	Task Task
	// Loss defaults to CrossEntropy for classification and MSE for
	// regression.
	Loss LossFunc
	// Optimizer updates the model's parameters.
	Optimizer optim.Optimizer
	// Schedule, if set, sets the learning rate at the start of each epoch.
	Schedule Schedule
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
	// Epochs is the number of passes over the training data.
	Epochs int
	// EarlyStopping stops before Epochs when a metric stops improving.
	EarlyStopping EarlyStopping
	// CheckpointPath, if set, is where checkpoints are written: every
	// CheckpointEvery optimizer steps (0: only at the end of each epoch),
	// at the end of every epoch, and when Fit is cancelled.
	CheckpointPath  string
	CheckpointEvery int
	// Hooks report progress.
	Hooks Hooks
}

// Trainer runs the training loop of a model: epochs of mini-batch steps,
// evaluation after each epoch, metrics, early stopping and checkpoints
// with resume. Build one with New, optionally LoadCheckpoint, then Fit.
type Trainer struct {
	opts   Options
	baseLR []float64

	// position: the next step to run is step of epoch (both 0-based)
	epoch, step int
	globalStep  int
	partial     meter // the current epoch's training sums so far
	partialSec  float64
	history     []EpochResult
	best        float64 // best monitored value so far
	bad         int     // epochs since it improved
	stopped     bool    // early stopping fired
}

// New checks the options and returns a trainer positioned at the start.
func New(opts Options) (*Trainer, error) {
	switch {
	case opts.Model == nil:
		return nil, errors.New("train: no model")
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
	case Classification:
		if !ds.HasLabels() {
			return nil, errors.New("train: classification needs class labels in the training data")
		}
		if opts.Loss == nil {
			opts.Loss = CrossEntropy(nn.ClassOptions{})
		}
	case Regression:
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
		if _, err := (EpochResult{Eval: &Metrics{}}).Monitored(es.Monitor); err != nil {
			return nil, fmt.Errorf("train: early stopping: %w", err)
		}
		if opts.Eval == nil && !isTrainMetric(es.Monitor) {
			return nil, fmt.Errorf("train: early stopping monitors %q but there is no evaluation data", es.Monitor)
		}
	}
	t := &Trainer{opts: opts, partial: meter{task: opts.Task}}
	t.best = math.Inf(1)
	if higherIsBetter(es.Monitor) {
		t.best = math.Inf(-1)
	}
	for g := range opts.Optimizer.NumGroups() {
		t.baseLR = append(t.baseLR, opts.Optimizer.LR(g))
	}
	return t, nil
}

func isTrainMetric(name string) bool { return len(name) > 6 && name[:6] == "train_" }

// History returns the results of the epochs run so far (including those
// restored from a checkpoint).
func (t *Trainer) History() []EpochResult { return append([]EpochResult(nil), t.history...) }

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

// Fit trains until Epochs epochs are done, early stopping fires, a hook
// fails or ctx is cancelled, and returns the history of all epochs. After
// LoadCheckpoint it continues where the checkpoint left off. When ctx is
// cancelled it writes a checkpoint (if a path is set) and returns an
// error wrapping ctx.Err().
func (t *Trainer) Fit(ctx context.Context) ([]EpochResult, error) {
	for t.epoch < t.opts.Epochs && !t.stopped {
		res, err := t.runEpoch(ctx)
		if err != nil {
			return t.History(), err
		}
		t.history = append(t.history, res)
		t.epoch, t.step = t.epoch+1, 0
		t.partial, t.partialSec = meter{task: t.opts.Task}, 0
		if es := t.opts.EarlyStopping; es.Patience > 0 {
			v, err := res.Monitored(es.Monitor)
			if err != nil {
				return t.History(), fmt.Errorf("train: early stopping: %w", err)
			}
			better := v < t.best-es.MinDelta
			if higherIsBetter(es.Monitor) {
				better = v > t.best+es.MinDelta
			}
			if better {
				t.best, t.bad = v, 0
			} else if t.bad++; t.bad >= es.Patience {
				t.stopped = true
			}
		}
		if t.opts.CheckpointPath != "" {
			if err := t.SaveCheckpoint(t.opts.CheckpointPath); err != nil {
				return t.History(), err
			}
		}
		if h := t.opts.Hooks.EpochEnd; h != nil {
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
func (t *Trainer) runEpoch(ctx context.Context) (EpochResult, error) {
	o := &t.opts
	opt := o.Optimizer
	epoch := t.epoch
	if o.Schedule != nil {
		f := o.Schedule(epoch)
		for g, lr := range t.baseLR {
			opt.SetLR(g, lr*f)
		}
	}
	nb := o.Train.Len()
	if h := o.Hooks.EpochStart; h != nil {
		h(epoch+1, nb)
	}
	o.Model.SetTraining(true)
	start := time.Now()
	for k, b := range o.Train.EpochFrom(epoch, t.step) {
		if err := ctx.Err(); err != nil {
			t.partialSec += time.Since(start).Seconds()
			return EpochResult{}, t.interrupted(err)
		}
		out := o.Model.Forward(b.X)
		loss := o.Loss(out, b)
		lv := loss.Item()
		if math.IsNaN(lv) || math.IsInf(lv, 0) {
			return EpochResult{}, &NonFiniteLossError{Epoch: epoch + 1, Batch: k + 1, Batches: nb, Loss: lv}
		}
		opt.ZeroGrad()
		loss.Backward()
		if err := t.clip(); err != nil {
			return EpochResult{}, fmt.Errorf("train: epoch %d, batch %d: %w", epoch+1, k+1, err)
		}
		if err := opt.Step(); err != nil {
			return EpochResult{}, fmt.Errorf("train: epoch %d, batch %d: %w", epoch+1, k+1, err)
		}
		t.partial.add(lv, out, b)
		t.step = k + 1
		t.globalStep++
		if h := o.Hooks.Batch; h != nil {
			h(BatchEvent{Epoch: epoch + 1, Batch: k + 1, Batches: nb, Step: t.globalStep, Loss: lv,
				Samples: t.partial.n, Elapsed: time.Since(start) + time.Duration(t.partialSec*float64(time.Second))})
		}
		if o.CheckpointPath != "" && o.CheckpointEvery > 0 && t.globalStep%o.CheckpointEvery == 0 && t.step < nb {
			sec := time.Since(start).Seconds()
			t.partialSec += sec
			err := t.SaveCheckpoint(o.CheckpointPath)
			t.partialSec -= sec
			if err != nil {
				return EpochResult{}, err
			}
		}
	}
	res := EpochResult{
		Epoch:   epoch + 1,
		Train:   t.partial.metrics(),
		LR:      opt.LR(0),
		Seconds: t.partialSec + time.Since(start).Seconds(),
		Steps:   t.globalStep,
	}
	if o.Eval != nil {
		es := time.Now()
		m, err := Evaluate(o.Model, o.Eval, o.Task, o.Loss)
		if err != nil {
			return EpochResult{}, fmt.Errorf("train: evaluating after epoch %d: %w", epoch+1, err)
		}
		res.Eval = &m
		res.EvalSeconds = time.Since(es).Seconds()
	}
	return res, nil
}

// interrupted checkpoints a cancelled run and wraps the context error.
func (t *Trainer) interrupted(cause error) error {
	if t.opts.CheckpointPath != "" {
		if err := t.SaveCheckpoint(t.opts.CheckpointPath); err != nil {
			return errors.Join(fmt.Errorf("train: interrupted at epoch %d, step %d: %w", t.epoch+1, t.step, cause), err)
		}
		return fmt.Errorf("train: interrupted at epoch %d, step %d (checkpoint written to %s): %w", t.epoch+1, t.step, t.opts.CheckpointPath, cause)
	}
	return fmt.Errorf("train: interrupted at epoch %d, step %d: %w", t.epoch+1, t.step, cause)
}

// Evaluate scores model on every batch of loader in evaluation mode, with
// inputs marked NoGrad so no graph is recorded. A nil loss means the
// task's default. The model is left in evaluation mode.
func Evaluate(model nn.Layer, loader *data.Loader, task Task, loss LossFunc) (Metrics, error) {
	if loss == nil {
		switch task {
		case Classification:
			loss = CrossEntropy(nn.ClassOptions{})
		case Regression:
			loss = MSE()
		}
	}
	ds := loader.Dataset()
	if task == Classification && !ds.HasLabels() {
		return Metrics{}, errors.New("evaluate: classification needs class labels in the data")
	}
	if task == Regression && !ds.HasTargets() {
		return Metrics{}, errors.New("evaluate: regression needs numeric targets in the data")
	}
	model.SetTraining(false)
	m := meter{task: task}
	for _, b := range loader.Epoch(0) {
		out := model.Forward(b.X.NoGrad())
		m.add(loss(out, b).Item(), out, b)
	}
	return m.metrics(), nil
}

// StepDecay multiplies the learning rate by gamma every stepSize epochs
// (PyTorch's StepLR).
func StepDecay(stepSize int, gamma float64) Schedule {
	return func(epoch int) float64 { return math.Pow(gamma, float64(epoch/max(stepSize, 1))) }
}

// ExponentialDecay multiplies the learning rate by gamma every epoch
// (PyTorch's ExponentialLR).
func ExponentialDecay(gamma float64) Schedule {
	return func(epoch int) float64 { return math.Pow(gamma, float64(epoch)) }
}

// CosineDecay anneals the learning rate from its initial value to
// minFactor times it over tMax epochs along half a cosine (Loshchilov and
// Hutter, "SGDR: Stochastic Gradient Descent with Warm Restarts", ICLR
// 2017, without restarts; PyTorch's CosineAnnealingLR), staying at the
// minimum afterwards.
func CosineDecay(tMax int, minFactor float64) Schedule {
	return func(epoch int) float64 {
		e := min(epoch, tMax)
		return minFactor + (1-minFactor)*(1+math.Cos(math.Pi*float64(e)/float64(max(tMax, 1))))/2
	}
}

// clip applies the configured gradient clipping to the model's parameters.
func (t *Trainer) clip() error {
	o := &t.opts
	if o.ClipGradNorm <= 0 && o.ClipGradValue <= 0 {
		return nil
	}
	params := o.Model.Parameters()
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
