// Command iris trains a small MLP on the embedded Iris data with the
// library API alone: a model written as a module, the cross-entropy loss,
// the Adam optimizer and a hand-written training loop over a data.Loader.
// It is the Go counterpart of examples/iris.yaml.
//
//	go run ./examples/iris
package main

import (
	"fmt"
	"log"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/tensor"
)

// MLP is a model as a module: it embeds nn.Base, registers its layers and
// has a Forward method.
type MLP struct {
	nn.Base
	hidden, out *nn.Linear
}

func NewMLP(rng *tensor.RNG, in, hidden, classes int) *MLP {
	m := &MLP{hidden: nn.NewLinear(rng, in, hidden), out: nn.NewLinear(rng, hidden, classes)}
	m.Register("hidden", m.hidden)
	m.Register("out", m.out)
	return m
}

func (m *MLP) Forward(x *tensor.Tensor) *tensor.Tensor {
	return m.out.Forward(m.hidden.Forward(x).Relu())
}

func main() {
	iris, err := data.Iris()
	if err != nil {
		log.Fatal(err)
	}
	parts, err := data.Split(iris, data.SplitOptions{Train: 0.7, Seed: 1, Stratify: true})
	if err != nil {
		log.Fatal(err)
	}
	scaler := data.FitStandardizer(parts.Train) // statistics of the training rows only
	scaler.Apply(parts.Train)
	scaler.Apply(parts.Test)

	ds, err := data.NewDataset(parts.Train, data.DatasetOptions{})
	if err != nil {
		log.Fatal(err)
	}
	loader, err := data.NewLoader(ds, data.LoaderOptions{BatchSize: 16, Shuffle: true, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}

	model := NewMLP(tensor.NewRNG(1), 4, 16, 3)
	opt, err := optim.NewAdam(model.Parameters(), optim.AdamOptions{LR: 0.01})
	if err != nil {
		log.Fatal(err)
	}

	for epoch := range 60 {
		model.Train()
		total := 0.0
		for _, b := range loader.Epoch(epoch) {
			loss := nn.CrossEntropyLoss(model.Forward(b.X), b.Labels, nn.ClassOptions{})
			opt.ZeroGrad()
			loss.Backward()
			if err := opt.Step(); err != nil {
				log.Fatal(err)
			}
			total += loss.Item() * float64(b.Size)
		}
		if (epoch+1)%20 == 0 {
			fmt.Printf("epoch %d: train loss %.4f\n", epoch+1, total/float64(ds.Len()))
		}
	}

	// Evaluation: eval mode and a NoGrad input, so no graph is recorded.
	model.Eval()
	x := tensor.FromFloat32(parts.Test.X, parts.Test.Rows, parts.Test.Cols).NoGrad()
	y := tensor.FromInt64(parts.Test.Labels, parts.Test.Rows)
	pred := model.Forward(x).ArgMax(1, false)
	acc := pred.Eq(y).To(tensor.Float64).MeanAll().Item()
	fmt.Printf("test accuracy %.4f on %d flowers\n", acc, parts.Test.Rows)
}
