package modelfile

import (
	"errors"
	"iter"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// LossFunc computes the mean loss of a batch from the model's output as a
// one-element tensor (train.LossFunc is one).
type LossFunc = func(out *tensor.Tensor, b *data.Batch) *tensor.Tensor

// DefaultLoss returns the task's default loss: cross-entropy of the logits
// against the class labels for classification, mean squared error against
// the targets for regression.
func DefaultLoss(task metrics.Task) LossFunc {
	if task == metrics.Regression {
		return func(out *tensor.Tensor, b *data.Batch) *tensor.Tensor {
			return nn.MSELoss(out, b.Targets, nn.ReduceMean)
		}
	}
	return func(out *tensor.Tensor, b *data.Batch) *tensor.Tensor {
		return nn.CrossEntropyLoss(out, b.Labels, nn.ClassOptions{})
	}
}

// CheckTargets reports whether ds has what task needs: class labels for
// classification, numeric targets for regression.
func CheckTargets(ds *data.Dataset, task metrics.Task) error {
	if task == metrics.Classification && !ds.HasLabels() {
		return errors.New("evaluate: classification needs class labels in the data")
	}
	if task == metrics.Regression && !ds.HasTargets() {
		return errors.New("evaluate: regression needs numeric targets in the data")
	}
	return nil
}

// AddBatch records a batch in acc: its mean loss and the model's output
// for it (the logits [n, classes] of a classification batch, the values
// [n, 1] of a regression batch).
func AddBatch(acc *metrics.Accumulator, meanLoss float64, out *tensor.Tensor, b *data.Batch) {
	n := b.Size
	acc.AddLoss(meanLoss, n)
	switch acc.Task {
	case metrics.Classification:
		if b.Labels != nil && out.Dim() == 2 && out.DType() == tensor.Float32 {
			acc.AddLogits(out.Float32s(), out.Size(1), b.Labels.Int64s())
		}
	case metrics.Regression:
		if b.Targets != nil && out.Numel() == n {
			acc.AddValues(out.Float32s(), b.Targets.Float32s())
		}
	}
}

// EvalBatches is the evaluation loop: it runs model in evaluation mode
// over batches, with inputs marked NoGrad so no graph is recorded, and
// adds each batch's loss and outputs to acc. A nil loss means the task's
// default. The model is left in evaluation mode.
func EvalBatches(acc *metrics.Accumulator, model nn.Layer, batches iter.Seq2[int, *data.Batch], loss LossFunc) {
	if loss == nil {
		loss = DefaultLoss(acc.Task)
	}
	model.SetTraining(false)
	for _, b := range batches {
		out := model.Forward(b.X.NoGrad())
		AddBatch(acc, loss(out, b).Item(), out, b)
	}
}

// Evaluate scores model on every batch of loader (EvalBatches over the
// loader's first epoch). A nil loss means the task's default.
func Evaluate(model nn.Layer, loader *data.Loader, task metrics.Task, loss LossFunc) (metrics.Metrics, error) {
	if err := CheckTargets(loader.Dataset(), task); err != nil {
		return metrics.Metrics{}, err
	}
	acc := metrics.Accumulator{Task: task}
	EvalBatches(&acc, model, loader.Epoch(0), loss)
	return acc.Metrics(), nil
}
