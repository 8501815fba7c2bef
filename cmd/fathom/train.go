package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/fathom-ml/fathom/dashboard"
	"github.com/fathom-ml/fathom/runlog"
	"github.com/fathom-ml/fathom/train"
	"github.com/fathom-ml/fathom/train/job"
)

func init() {
	var sets []string
	var quiet bool
	var dash dashboardFlags
	cmd := &cobra.Command{
		Use:   "train CONFIG.yaml",
		Short: "Train the model a YAML config describes",
		Long: `Train reads a YAML job description (data, model, loss, optimizer, schedule,
epochs, batch_size, seed, early_stopping, output), trains the model with an
evaluation after every epoch, scores it on the test split and writes into the
output directory (default runs/<config name>):

  model.safetensors  weights + architecture (loadable by fathom predict/eval)
  metrics.csv        one row per epoch
  curves.png         learning curves

Unknown keys are errors naming the key and its line. --set overrides a key
with a YAML value (list items by index: --set model.0.out=32). Progress goes to
stderr (a progress bar on a terminal); with --json, stdout gets one JSON line
per epoch ({epoch, train, eval, eval_split, lr, seconds, steps}: eval holds the
metrics of the split eval_split names, "val" with data.validation, else
"test") and a final line with train_loss, test_loss, test_accuracy (or
test_rmse), seconds_per_epoch and model_path. metrics.csv names its evaluation
columns the same way (val_loss or test_loss). Early stopping needs a
validation split (data.validation). Ctrl-C writes a checkpoint first when
output.checkpoint_every or output.resume is set.`,
		Example: `  fathom train examples/iris.yaml
  fathom train examples/fashion-mlp.yaml --set epochs=1 --json
  fathom train examples/linear-regression.yaml --set optimizer.lr=0.05 --quiet`,
		Args: cobra.RangeArgs(1, 2), // CONFIG [ADDR of a bare --dashboard]
		RunE: func(cmd *cobra.Command, args []string) error {
			if args = dash.takeAddress(args, 1); len(args) != 1 {
				return fmt.Errorf("accepts 1 arg, received %d", len(args))
			}
			return runTrainDashboard(cmd.Context(), args[0], sets, quiet, dash, os.Stderr)
		},
	}
	dash.register(cmd)
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a config key: key.path=value (repeatable)")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress bar or per-epoch lines on stderr")
	rootCmd.AddCommand(cmd)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// runTrainDashboard runs runTrain with the dashboard the flags ask for.
func runTrainDashboard(ctx context.Context, path string, sets []string, quiet bool, dash dashboardFlags, stderr io.Writer) error {
	srv, err := dash.start(stderr)
	if err != nil {
		return err
	}
	workers := dash.addr != "" // every rank reports to rank 0's page
	if srv == nil {
		return runTrainOn(ctx, path, sets, quiet, nil, workers, stderr)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = runTrainOn(ctx, path, sets, quiet, srv.Board(), workers, stderr)
	dash.finish(ctx, srv, stderr)
	return err
}

// runTrain is the body of `fathom train`; stderr receives progress.
func runTrain(ctx context.Context, path string, sets []string, quiet bool, stderr io.Writer) error {
	return runTrainOn(ctx, path, sets, quiet, nil, false, stderr)
}

// runTrainOn is runTrain reporting to a dashboard board (nil for none);
// workers makes every rank of a distributed job report to rank 0's.
func runTrainOn(ctx context.Context, path string, sets []string, quiet bool, board *dashboard.Board, workers bool, stderr io.Writer) error {
	cfg, err := job.Load(path, sets)
	if err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	var log io.Writer = stderr
	if quiet {
		log = nil
	}
	ro := job.RunOptions{Log: log, Dashboard: board, DashboardWorkers: workers}
	if !quiet && isTerminal(stderr) {
		ro.Hooks = progressHooks(stderr, cfg.Epochs)
	}
	epochEnd := ro.Hooks.EpochEnd
	ro.Hooks.EpochEnd = func(r runlog.Epoch) error {
		if epochEnd != nil {
			if err := epochEnd(r); err != nil {
				return err
			}
		}
		if !quiet {
			fmt.Fprintln(stderr, cfg.EpochSummary(r))
		}
		if jsonOut {
			return printJSON(cfg.EpochLine(r))
		}
		return nil
	}
	res, err := job.Run(ctx, cfg, ro)
	if err != nil {
		return err
	}
	if !res.Main {
		return nil // a distributed job's other workers: rank 0 reports
	}
	if jsonOut {
		return printJSON(res.FinalLine())
	}
	fmt.Println(res.FinalSummary())
	return nil
}

// progressHooks draws one progress bar per epoch on w: batches done, the
// running loss, samples/s and the time left.
func progressHooks(w io.Writer, epochs int) train.Hooks {
	var bar *progressbar.ProgressBar
	var last time.Time
	var lossSum float64
	var lossN int
	return train.Hooks{
		EpochStart: func(epoch, batches int) {
			lossSum, lossN = 0, 0
			bar = progressbar.NewOptions(batches,
				progressbar.OptionSetWriter(w),
				progressbar.OptionSetDescription(fmt.Sprintf("epoch %d/%d", epoch, epochs)),
				progressbar.OptionShowCount(),
				progressbar.OptionSetPredictTime(true),
				progressbar.OptionSetWidth(30),
				progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionClearOnFinish(),
			)
		},
		Batch: func(e train.BatchEvent) {
			lossSum += e.Loss
			lossN++
			if now := time.Now(); now.Sub(last) > 200*time.Millisecond || e.Batch == e.Batches {
				last = now
				rate := float64(e.Samples) / max(e.Elapsed.Seconds(), 1e-9)
				bar.Describe(fmt.Sprintf("epoch %d/%d loss %.4f %.0f samples/s", e.Epoch, epochs, lossSum/float64(lossN), rate))
			}
			bar.Set(e.Batch)
		},
		EpochEnd: func(runlog.Epoch) error {
			if bar != nil {
				bar.Finish()
				bar.Exit()
			}
			return nil
		},
	}
}
