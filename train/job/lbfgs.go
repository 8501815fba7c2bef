package job

import (
	"fmt"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/tensor"
)

// L-BFGS in a config (optimizer: {type: lbfgs}) is full-batch: every epoch
// is one optim.LBFGS step of up to max_iter iterations over all training
// rows, with the strong-Wolfe line search, so a small tabular problem (a
// linear softmax model is logistic regression) is solved to convergence
// as scikit-learn's lbfgs solver does. It runs in train.Trainer as a
// train.FullBatch optimizer, so early stopping, checkpoints and exact
// resume work as with the mini-batch optimizers; batch order, schedules
// and gradient clipping do not apply.

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
	case o.MaxIter < 0 || o.HistorySize < 0 || o.TolGrad < 0 || o.TolChange < 0:
		return fmt.Errorf("optimizer: max_iter, history_size, tolerance_grad and tolerance_change must not be negative")
	}
	return nil
}

// newLBFGS returns the full-batch optimizer of an lbfgs config over net's
// trainable parameters, the training set as one batch in a fixed order,
// and the weight-decay penalty (nil without weight_decay), for
// train.Options' FullBatch, Train and Penalty.
func (c *Config) newLBFGS(net *nn.Sequential, ds *data.Dataset) (*optim.LBFGS, *data.Loader, func() *tensor.Tensor, error) {
	o := c.Optimizer
	maxIter := o.MaxIter
	if maxIter == 0 {
		maxIter = lbfgsDefaultMaxIter
	}
	opt, err := optim.NewLBFGS(trainable(net.Parameters()), optim.LBFGSOptions{LR: o.LR, MaxIter: maxIter,
		TolGrad: o.TolGrad, TolChange: o.TolChange, HistorySize: o.HistorySize, LineSearch: optim.StrongWolfe})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("optimizer: %w", err)
	}
	if ds.Len() == 0 {
		return nil, nil, nil, fmt.Errorf("data: no training rows")
	}
	full, err := data.NewLoader(ds, data.LoaderOptions{BatchSize: ds.Len(), Prefetch: -1})
	if err != nil {
		return nil, nil, nil, err
	}
	// weight_decay adds (weight_decay/2)·‖W‖² over the weight matrices
	// (not the biases) to the mean loss: scikit-learn's L2 penalty with
	// C = 1/(weight_decay·training rows).
	if o.WeightDecay == nil || *o.WeightDecay <= 0 {
		return opt, full, nil, nil
	}
	wd := *o.WeightDecay
	var weights []*tensor.Tensor
	for _, p := range net.Parameters() {
		if p.Dim() >= 2 {
			weights = append(weights, p)
		}
	}
	penalty := func() *tensor.Tensor {
		var sum *tensor.Tensor
		for _, w := range weights {
			p := w.Square().Sum(nil, false).MulScalar(wd / 2)
			if sum == nil {
				sum = p
			} else {
				sum = sum.Add(p)
			}
		}
		return sum
	}
	if len(weights) == 0 {
		penalty = nil
	}
	return opt, full, penalty, nil
}
