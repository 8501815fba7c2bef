// Command fashion-mlp trains the 784-256-128-10 MLP of
// examples/fashion-mlp.yaml on Fashion-MNIST with the train.Trainer: the
// model comes from layer specs (nn.Build), batches from a prefetching
// data.Loader, and the trainer runs epochs, evaluation and metrics. The
// model is then saved as a model file that `fathom predict` loads.
//
//	go run ./examples/fashion-mlp [-epochs 5]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/runlog"
	"github.com/fathom-ml/fathom/tensor"
	"github.com/fathom-ml/fathom/train"
)

func main() {
	epochs := flag.Int("epochs", 5, "training epochs")
	out := flag.String("out", "fashion-mlp.safetensors", "model file to write")
	flag.Parse()

	trainT, err := data.LoadFashionMNIST("train")
	if err != nil {
		log.Fatal(err) // needs /usr/share/datasets/fashion-mnist or FATHOM_DATA
	}
	testT, err := data.LoadFashionMNIST("t10k")
	if err != nil {
		log.Fatal(err)
	}
	loader := func(t *data.Table, opts data.LoaderOptions) *data.Loader {
		ds, err := data.NewDataset(t, data.DatasetOptions{}) // flat [784] examples
		if err != nil {
			log.Fatal(err)
		}
		l, err := data.NewLoader(ds, opts)
		if err != nil {
			log.Fatal(err)
		}
		return l
	}

	spec := nn.Spec{Input: []int{784}, Layers: []nn.LayerSpec{
		{Type: "linear", Out: 256}, {Type: "relu"},
		{Type: "linear", Out: 128}, {Type: "relu"},
		{Type: "linear", Out: 10},
	}}
	net, _, err := spec.Build(tensor.NewRNG(0))
	if err != nil {
		log.Fatal(err)
	}
	opt, err := optim.NewAdam(net.Parameters(), optim.AdamOptions{LR: 1e-3})
	if err != nil {
		log.Fatal(err)
	}
	tr, err := train.New(train.Options{
		Model: net, Optimizer: opt, Epochs: *epochs,
		Train: loader(trainT, data.LoaderOptions{BatchSize: 64, Shuffle: true, Seed: 0}),
		Eval:  loader(testT, data.LoaderOptions{BatchSize: 1000}),
		Hooks: train.Hooks{EpochEnd: func(r runlog.Epoch) error {
			fmt.Printf("epoch %d: train loss %.4f, test accuracy %.4f, %.2f s\n", r.Epoch, r.Train.Loss, r.Eval.Accuracy, r.Seconds)
			return nil
		}},
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := tr.Fit(context.Background()); err != nil {
		log.Fatal(err)
	}
	m := &modelfile.Model{Net: net, Spec: spec, Task: metrics.Classification, Classes: trainT.Classes}
	if err := m.Save(*out); err != nil {
		log.Fatal(err)
	}
	fmt.Println("model written to", *out)
}
