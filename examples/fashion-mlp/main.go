// Command fashion-mlp trains the 784-256-128-10 MLP of
// examples/fashion-mlp.yaml on Fashion-MNIST with the train.Trainer: the
// model comes from layer specs (nn.Build), batches from a prefetching
// data.Loader, and the trainer runs epochs, evaluation and metrics. The
// model is then saved as a model file that `fathom predict` loads.
//
//	go run ./examples/fashion-mlp [-epochs 5] [-dir runs/fashion-mlp-go]
//
// The model file is runs/fashion-mlp-go/model.safetensors (relative to the
// working directory; runs/ is git-ignored); a rerun trains from scratch and
// replaces it, and says so on stderr. `fathom train
// examples/fashion-mlp.yaml` trains the same model and writes to
// runs/fashion-mlp; this program keeps to its own directory.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/runlog"
	"github.com/fathom-ml/fathom/tensor"
	"github.com/fathom-ml/fathom/train"
)

// options are one run's settings: main fills them from the flags, the
// tests with a tiny budget.
type options struct {
	dir    string // output directory, created if missing
	epochs int
	// trainRows and testRows, when positive, keep only the first that many
	// examples of each split (a quick try); 0 keeps all.
	trainRows, testRows int
	// load reads a split ("train", "t10k"); nil means data.LoadFashionMNIST.
	load           func(split string) (*data.Table, error)
	stdout, stderr io.Writer
}

// modelName is the model file's name inside options.dir.
const modelName = runlog.ModelFile

func main() {
	o := options{stdout: os.Stdout, stderr: os.Stderr}
	flag.IntVar(&o.epochs, "epochs", 5, "training epochs")
	flag.StringVar(&o.dir, "dir", filepath.Join("runs", "fashion-mlp-go"), "output directory for "+modelName)
	flag.IntVar(&o.trainRows, "train", 0, "train on the first `N` training images only (0: all 60000)")
	flag.IntVar(&o.testRows, "test", 0, "evaluate on the first `N` test images only (0: all 10000)")
	flag.Parse()
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "fashion-mlp:", err)
		os.Exit(1)
	}
}

// run trains the model and writes it to o.dir.
func run(ctx context.Context, o options) error {
	if o.load == nil {
		o.load = data.LoadFashionMNIST
	}
	split := func(name string, rows int) (*data.Table, error) {
		t, err := o.load(name)
		if err != nil {
			return nil, err // names the directory it looked in (FATHOM_DATA to change it)
		}
		if rows > 0 && rows < t.Rows {
			t = t.Subset(firstN(rows))
		}
		return t, nil
	}
	trainT, err := split("train", o.trainRows)
	if err != nil {
		return err
	}
	testT, err := split("t10k", o.testRows)
	if err != nil {
		return err
	}
	loader := func(t *data.Table, opts data.LoaderOptions) (*data.Loader, error) {
		ds, err := data.NewDataset(t, data.DatasetOptions{}) // flat [784] examples
		if err != nil {
			return nil, err
		}
		return data.NewLoader(ds, opts)
	}
	trainL, err := loader(trainT, data.LoaderOptions{BatchSize: 64, Shuffle: true, Seed: 0})
	if err != nil {
		return err
	}
	testL, err := loader(testT, data.LoaderOptions{BatchSize: 1000})
	if err != nil {
		return err
	}

	spec := nn.Spec{Input: []int{784}, Layers: []nn.LayerSpec{
		{Type: "linear", Out: 256}, {Type: "relu"},
		{Type: "linear", Out: 128}, {Type: "relu"},
		{Type: "linear", Out: 10},
	}}
	net, _, err := spec.Build(tensor.NewRNG(0))
	if err != nil {
		return err
	}
	opt, err := optim.NewAdam(net.Parameters(), optim.AdamOptions{LR: 1e-3})
	if err != nil {
		return err
	}
	tr, err := train.New(train.Options{
		Model: net, Optimizer: opt, Epochs: o.epochs,
		Train: trainL, Eval: testL,
		Hooks: train.Hooks{EpochEnd: func(r runlog.Epoch) error {
			fmt.Fprintf(o.stdout, "epoch %d: train loss %.4f, test accuracy %.4f, %.2f s\n", r.Epoch, r.Train.Loss, r.Eval.Accuracy, r.Seconds)
			return nil
		}},
	})
	if err != nil {
		return err
	}
	if _, err := tr.Fit(ctx); err != nil {
		return err
	}

	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(o.dir, modelName)
	if _, err := os.Stat(path); err == nil {
		fmt.Fprintf(o.stderr, "replacing %s of an earlier run\n", path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	m := &modelfile.Model{Net: net, Spec: spec, Task: metrics.Classification, Classes: trainT.Classes}
	if err := m.Save(path); err != nil {
		return err
	}
	fmt.Fprintln(o.stdout, "model written to", path)
	return nil
}

// firstN returns the row indices 0..n-1.
func firstN(n int) []int {
	rows := make([]int, n)
	for i := range rows {
		rows[i] = i
	}
	return rows
}
