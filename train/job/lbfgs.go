package job

import (
	"context"
	"fmt"
	"time"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/runlog"
	"github.com/fathom-ml/fathom/tensor"
	"github.com/fathom-ml/fathom/train"
)

// L-BFGS in a config (optimizer: {type: lbfgs}) is full-batch: every epoch
// is one optim.LBFGS step of up to max_iter iterations over all training
// rows, with the strong-Wolfe line search, so a small tabular problem (a
// linear softmax model is logistic regression) is solved to convergence
// as scikit-learn's lbfgs solver does. Mini-batch features (batch order,
// schedules, gradient clipping, checkpoints, early stopping) do not apply.

// lbfgsDefaultMaxIter is the iteration limit of one epoch (scikit-learn's
// LogisticRegression default; PyTorch's is 20).
const lbfgsDefaultMaxIter = 100

// checkLBFGS reports the settings that full-batch L-BFGS cannot honour.
func (c *Config) checkLBFGS() error {
	o := c.Optimizer
	switch {
	case o.WeightDecay != nil && *o.WeightDecay < 0:
		return fmt.Errorf("optimizer.weight_decay: must not be negative, got %g", *o.WeightDecay)
	case o.ClipGradNorm != 0 || o.ClipGradValue != 0:
		return fmt.Errorf("optimizer.clip_grad_norm and clip_grad_value: not supported with lbfgs (it searches its own step length)")
	case c.Schedule.Type != "" && c.Schedule.Type != "none" && c.Schedule.Type != "constant":
		return fmt.Errorf("schedule: not supported with lbfgs")
	case c.EarlyStopping.Patience > 0:
		return fmt.Errorf("early_stopping: not supported with lbfgs (it stops when it converges)")
	case c.Output.CheckpointEvery > 0 || c.Output.Resume:
		return fmt.Errorf("output.checkpoint_every and output.resume: not supported with lbfgs")
	case o.MaxIter < 0 || o.HistorySize < 0 || o.TolGrad < 0 || o.TolChange < 0:
		return fmt.Errorf("optimizer: max_iter, history_size, tolerance_grad and tolerance_change must not be negative")
	}
	return nil
}

// fitLBFGS trains net full-batch with L-BFGS for c.Epochs steps (fewer
// when it has converged), evaluating on evalL after each, and returns the
// per-epoch records.
func (c *Config) fitLBFGS(ctx context.Context, net *nn.Sequential, trainDS *data.Dataset, evalL *data.Loader,
	task metrics.Task, hooks train.Hooks, logf func(string, ...any)) ([]runlog.Epoch, error) {
	o := c.Optimizer
	maxIter := o.MaxIter
	if maxIter == 0 {
		maxIter = lbfgsDefaultMaxIter
	}
	opt, err := optim.NewLBFGS(trainable(net.Parameters()), optim.LBFGSOptions{LR: o.LR, MaxIter: maxIter,
		TolGrad: o.TolGrad, TolChange: o.TolChange, HistorySize: o.HistorySize, LineSearch: optim.StrongWolfe})
	if err != nil {
		return nil, fmt.Errorf("optimizer: %w", err)
	}
	full, err := data.NewLoader(trainDS, data.LoaderOptions{BatchSize: max(trainDS.Len(), 1), Prefetch: -1})
	if err != nil {
		return nil, err
	}
	var batch *data.Batch
	for _, b := range full.Epoch(0) {
		batch = b
	}
	if batch == nil {
		return nil, fmt.Errorf("data: no training rows")
	}
	loss := c.lossFunc()
	// weight_decay adds (weight_decay/2)·‖W‖² over the weight matrices
	// (not the biases) to the mean loss: scikit-learn's L2 penalty with
	// C = 1/(weight_decay·training rows).
	var wd float64
	if o.WeightDecay != nil {
		wd = *o.WeightDecay
	}
	var weights []*tensor.Tensor
	for _, p := range net.Parameters() {
		if p.Dim() >= 2 {
			weights = append(weights, p)
		}
	}
	objective := func() *tensor.Tensor {
		l := loss(net.Forward(batch.X), batch)
		for _, w := range weights {
			if wd > 0 {
				l = l.Add(w.Square().Sum(nil, false).MulScalar(wd / 2))
			}
		}
		return l
	}
	var hist []runlog.Epoch
	for epoch := 1; epoch <= c.Epochs; epoch++ {
		if err := ctx.Err(); err != nil {
			return hist, err
		}
		if hooks.EpochStart != nil {
			hooks.EpochStart(epoch, 1)
		}
		start := time.Now()
		net.SetTraining(true)
		first, err := opt.Step(func() float64 {
			opt.ZeroGrad()
			l := objective()
			l.Backward()
			return l.Item()
		})
		if err != nil {
			return hist, fmt.Errorf("epoch %d: %w", epoch, err)
		}
		secs := time.Since(start).Seconds()
		if hooks.Batch != nil {
			hooks.Batch(train.BatchEvent{Epoch: epoch, Batch: 1, Batches: 1, Step: opt.Iterations(), Loss: first,
				Samples: batch.Size, Elapsed: time.Since(start)})
		}
		// The training metrics of the weights the step ended with.
		acc := metrics.Accumulator{Task: task}
		modelfile.EvalBatches(&acc, net, full.Epoch(0), loss)
		r := runlog.Epoch{Epoch: epoch, Train: acc.Metrics(), LR: opt.LR(0), Seconds: secs, Steps: opt.Iterations()}
		if evalL != nil {
			t0 := time.Now()
			m, err := modelfile.Evaluate(net, evalL, task, loss)
			if err != nil {
				return hist, err
			}
			r.Eval, r.EvalSeconds = &m, time.Since(t0).Seconds()
		}
		hist = append(hist, r)
		if hooks.EpochEnd != nil {
			if err := hooks.EpochEnd(r); err != nil {
				return hist, err
			}
		}
	}
	logf("lbfgs: %d iterations, %d loss evaluations", opt.Iterations(), opt.Evaluations())
	return hist, nil
}
