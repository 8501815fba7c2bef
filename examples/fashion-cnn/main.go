// Command fashion-cnn trains the small CNN of examples/fashion-cnn.yaml on
// Fashion-MNIST: examples shaped [1, 28, 28] for the convolutions, a
// Sequential built from layer constructors, and the train.Trainer with a
// checkpoint every 200 steps.
//
//	go run ./examples/fashion-cnn [-epochs 1] [-dir runs/fashion-cnn-go] [-fresh]
//
// The checkpoint is runs/fashion-cnn-go/checkpoint.safetensors (relative to
// the working directory; runs/ is git-ignored). Ctrl-C writes it and stops;
// the next run resumes from it and says so on stderr. A checkpoint of a
// finished run is not trained again: the program reports its result and
// says how to start over (-fresh, or delete the directory) or go on
// (-epochs with more epochs).
//
// `fathom train examples/fashion-cnn.yaml` trains the same model and writes
// to runs/fashion-cnn; this program keeps to its own directory so neither
// resumes from the other's checkpoint.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/fathom-ml/fathom/data"
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
	fresh  bool // delete an existing checkpoint instead of resuming from it
	// trainRows and testRows, when positive, keep only the first that many
	// examples of each split (a quick try); 0 keeps all.
	trainRows, testRows int
	// load reads a split ("train", "t10k"); nil means data.LoadFashionMNIST.
	load           func(split string) (*data.Table, error)
	stdout, stderr io.Writer
}

// checkpointName is the checkpoint's file name inside options.dir.
const checkpointName = runlog.CheckpointFile

func main() {
	o := options{stdout: os.Stdout, stderr: os.Stderr}
	flag.IntVar(&o.epochs, "epochs", 1, "training epochs (in all, counting those of a resumed checkpoint)")
	flag.StringVar(&o.dir, "dir", filepath.Join("runs", "fashion-cnn-go"), "output directory for "+checkpointName)
	flag.BoolVar(&o.fresh, "fresh", false, "start over: delete the checkpoint of an earlier run instead of resuming from it")
	flag.IntVar(&o.trainRows, "train", 0, "train on the first `N` training images only (0: all 60000)")
	flag.IntVar(&o.testRows, "test", 0, "evaluate on the first `N` test images only (0: all 10000)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, o) // Ctrl-C writes a checkpoint and returns
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fashion-cnn:", err)
		os.Exit(1)
	}
}

// run trains (or resumes training) and prints the test accuracy.
func run(ctx context.Context, o options) error {
	if o.load == nil {
		o.load = data.LoadFashionMNIST
	}
	loader := func(split string, rows int, opts data.LoaderOptions) (*data.Loader, error) {
		t, err := o.load(split)
		if err != nil {
			return nil, err // names the directory it looked in (FATHOM_DATA to change it)
		}
		if rows > 0 && rows < t.Rows {
			t = t.Subset(firstN(rows))
		}
		ds, err := data.NewDataset(t, data.DatasetOptions{Shape: []int{1, 28, 28}})
		if err != nil {
			return nil, err
		}
		return data.NewLoader(ds, opts)
	}
	trainL, err := loader("train", o.trainRows, data.LoaderOptions{BatchSize: 64, Shuffle: true})
	if err != nil {
		return err
	}
	testL, err := loader("t10k", o.testRows, data.LoaderOptions{BatchSize: 500})
	if err != nil {
		return err
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
		return err
	}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return err
	}
	ckpt := filepath.Join(o.dir, checkpointName)
	tr, err := train.New(train.Options{
		Model: net, Optimizer: opt, Epochs: o.epochs,
		Train: trainL, Eval: testL,
		CheckpointPath: ckpt, CheckpointEvery: 200,
		Hooks: train.Hooks{Batch: func(e train.BatchEvent) {
			if e.Batch%100 == 0 {
				fmt.Fprintf(o.stdout, "epoch %d batch %d/%d: loss %.4f\n", e.Epoch, e.Batch, e.Batches, e.Loss)
			}
		}},
	})
	if err != nil {
		return err
	}

	done, err := resume(tr, ckpt, o)
	if err != nil {
		return err
	}
	if !done {
		if _, err := tr.Fit(ctx); err != nil {
			if errors.Is(err, context.Canceled) {
				return fmt.Errorf("%w\nrun again to resume", err)
			}
			return err
		}
	}
	hist := tr.History()
	if len(hist) == 0 { // -epochs 0
		fmt.Fprintln(o.stdout, "no epochs trained")
		return nil
	}
	last := hist[len(hist)-1]
	fmt.Fprintf(o.stdout, "test accuracy %.4f after %d epochs (%.1f s for the last)\n", last.Eval.Accuracy, last.Epoch, last.Seconds)
	return nil
}

// resume deals with the checkpoint of an earlier run in ckpt: with
// o.fresh it deletes it; otherwise it loads it and says on stderr where
// training resumes, or that the run is already finished (done is then
// true and there is nothing to train).
func resume(tr *train.Trainer, ckpt string, o options) (done bool, err error) {
	if _, err := os.Stat(ckpt); errors.Is(err, os.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if o.fresh {
		if err := os.Remove(ckpt); err != nil {
			return false, err
		}
		fmt.Fprintf(o.stderr, "-fresh: deleted %s of an earlier run; starting over\n", ckpt)
		return false, nil
	}
	if err := tr.LoadCheckpoint(ckpt); err != nil {
		return false, fmt.Errorf("resuming from %s: %w\nstart over with -fresh (or delete %s)", ckpt, err, o.dir)
	}
	epoch, step, _ := tr.Position()
	if epoch >= o.epochs {
		hist := tr.History()
		acc := 0.0
		if len(hist) > 0 {
			acc = hist[len(hist)-1].Eval.Accuracy
		}
		fmt.Fprintf(o.stderr, "%s is the checkpoint of a finished run (epochs done: %d, test accuracy %.4f): nothing to train.\n"+
			"Start over with -fresh (or delete %s), or go on with -epochs %d.\n", ckpt, epoch, acc, o.dir, epoch+1)
		return true, nil
	}
	fmt.Fprintf(o.stderr, "resuming from %s at epoch %d of %d, step %d (-fresh starts over)\n", ckpt, epoch+1, o.epochs, step)
	return false, nil
}

// firstN returns the row indices 0..n-1.
func firstN(n int) []int {
	rows := make([]int, n)
	for i := range rows {
		rows[i] = i
	}
	return rows
}
