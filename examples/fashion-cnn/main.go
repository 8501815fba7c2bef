// Command fashion-cnn trains the small CNN of examples/fashion-cnn.yaml on
// Fashion-MNIST: examples shaped [1, 28, 28] for the convolutions, a
// Sequential built from layer constructors, and the train.Trainer with a
// checkpoint every 200 steps (rerun after an interrupt to resume).
//
//	go run ./examples/fashion-cnn [-epochs 1]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/tensor"
	"github.com/fathom-ml/fathom/train"
)

func main() {
	epochs := flag.Int("epochs", 1, "training epochs")
	ckpt := flag.String("checkpoint", "fashion-cnn.ckpt", "checkpoint file (resumed from when it exists)")
	flag.Parse()

	loader := func(split string, opts data.LoaderOptions) *data.Loader {
		t, err := data.LoadFashionMNIST(split)
		if err != nil {
			log.Fatal(err)
		}
		ds, err := data.NewDataset(t, data.DatasetOptions{Shape: []int{1, 28, 28}})
		if err != nil {
			log.Fatal(err)
		}
		l, err := data.NewLoader(ds, opts)
		if err != nil {
			log.Fatal(err)
		}
		return l
	}
	rng := tensor.NewRNG(0)
	conv := func(in, out int) *nn.Conv2d {
		return nn.NewConv2dWith(rng, nn.Conv2dConfig{In: in, Out: out, Kernel: nn.Pair(3), Padding: nn.Pair(1)})
	}
	net := nn.NewSequential(
		conv(1, 32), nn.NewReLU(), nn.NewMaxPool2d(2),
		conv(32, 64), nn.NewReLU(), nn.NewMaxPool2d(2),
		nn.NewFlatten(),
		nn.NewLinear(rng, 64*7*7, 128), nn.NewReLU(),
		nn.NewLinear(rng, 128, 10),
	)
	opt, err := optim.NewAdam(net.Parameters(), optim.AdamOptions{LR: 1e-3})
	if err != nil {
		log.Fatal(err)
	}
	tr, err := train.New(train.Options{
		Model: net, Optimizer: opt, Epochs: *epochs,
		Train:          loader("train", data.LoaderOptions{BatchSize: 64, Shuffle: true}),
		Eval:           loader("t10k", data.LoaderOptions{BatchSize: 500}),
		CheckpointPath: *ckpt, CheckpointEvery: 200,
		Hooks: train.Hooks{Batch: func(e train.BatchEvent) {
			if e.Batch%100 == 0 {
				fmt.Printf("epoch %d batch %d/%d: loss %.4f\n", e.Epoch, e.Batch, e.Batches, e.Loss)
			}
		}},
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := os.Stat(*ckpt); err == nil {
		if err := tr.LoadCheckpoint(*ckpt); err != nil {
			log.Fatal(err)
		}
		e, s, _ := tr.Position()
		fmt.Printf("resuming at epoch %d, step %d\n", e+1, s)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	hist, err := tr.Fit(ctx) // Ctrl-C writes a checkpoint and returns
	if err != nil {
		log.Fatal(err)
	}
	last := hist[len(hist)-1]
	fmt.Printf("test accuracy %.4f after %d epochs (%.1f s for the last)\n", last.Eval.Accuracy, last.Epoch, last.Seconds)
}
