package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/train/job"
)

// evalResult is the `fathom eval` report (a JSON line with --json).
type evalResult struct {
	Model    string   `json:"model"`
	Data     string   `json:"data"`
	Rows     int      `json:"rows"`
	Loss     *float64 `json:"loss"`
	Accuracy *float64 `json:"accuracy,omitempty"`
	RMSE     *float64 `json:"rmse,omitempty"`
}

// evalOptions are the flags of `fathom eval`.
type evalOptions struct {
	source, split string
	batch         int
	// sets are --set overrides of a config source.
	sets []string
	// allowDataChange scores the model even when a config's data is not
	// what the model was trained on.
	allowDataChange bool
	// model is the model file's path, for messages.
	model string
}

func init() {
	var o evalOptions
	cmd := &cobra.Command{
		Use:   "eval MODEL --data SOURCE",
		Short: "Score a trained model on labelled data",
		Long: `Eval loads a model file written by fathom train and reports its loss and
accuracy (classification) or RMSE (regression) on labelled data. SOURCE is

  CONFIG.yaml        the test split of a training config's data: the model
                     file records the split it was trained with (seed,
                     fractions, stratification) and a SHA-256 of its
                     training rows; eval uses that split, and refuses when
                     the data's training rows differ (naming what differs)
                     unless --allow-data-change. --set overrides config
                     keys as for fathom train.
  FILE.csv, FILE.parquet, DIR
                     a file with the model's feature columns and its label column
  iris               the embedded Iris data (all 150 rows)
  fashion-mnist      Fashion-MNIST ($FATHOM_DATA or /usr/share/datasets/
                     fashion-mnist), the t10k split unless --split train`,
		Example: `  fathom eval runs/iris/model.safetensors --data examples/iris.yaml
  fathom eval runs/fashion-mlp/model.safetensors --data fashion-mnist --json
  fathom eval runs/housing/model.safetensors --data houses_test.csv`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEval(args[0], o, os.Stdout, os.Stderr)
		},
	}
	cmd.Flags().StringVar(&o.source, "data", "", "labelled data: CONFIG.yaml, a CSV/Parquet file, iris or fashion-mnist (required)")
	cmd.Flags().StringVar(&o.split, "split", "test", "for fashion-mnist: test or train")
	cmd.Flags().IntVar(&o.batch, "batch", 1000, "rows per forward pass")
	cmd.Flags().StringArrayVar(&o.sets, "set", nil, "with a CONFIG source: override a config key, key.path=value (repeatable)")
	cmd.Flags().BoolVar(&o.allowDataChange, "allow-data-change", false, "with a CONFIG source: score the model even if the data differs from its training data")
	cmd.MarkFlagRequired("data")
	rootCmd.AddCommand(cmd)
}

// evalTable loads the labelled rows (raw features) named by source.
func evalTable(o evalOptions, m *modelfile.Model, stderr io.Writer) (*data.Table, error) {
	source, split := o.source, o.split
	lower := strings.ToLower(source)
	switch {
	case source == "iris":
		return data.Iris()
	case source == "fashion-mnist":
		switch split {
		case "test", "t10k":
			return data.LoadFashionMNIST("t10k")
		case "train":
			return data.LoadFashionMNIST("train")
		}
		return nil, fmt.Errorf("--split %q: want test or train", split)
	case strings.HasSuffix(lower, ".yaml") || strings.HasSuffix(lower, ".yml"):
		cfg, err := job.Load(source, append(slices.Clone(o.sets), "data.standardize=false"))
		if err != nil {
			return nil, err
		}
		td := m.TrainedOn
		if td == nil {
			fmt.Fprintf(stderr, "warning: %s does not record the split it was trained on; scoring the test split %s defines, which may hold training rows\n", o.model, source)
		} else {
			for _, n := range cfg.UseTrainedSplit(td) {
				fmt.Fprintf(stderr, "using the model's split: %s\n", n)
			}
		}
		s, err := cfg.LoadData()
		if err != nil {
			return nil, err
		}
		if td != nil {
			if err := job.CheckTrainedOn(td, s.TrainedOn); err != nil {
				if !o.allowDataChange {
					return nil, fmt.Errorf("%s: %w (--allow-data-change scores it anyway)", source, err)
				}
				fmt.Fprintf(stderr, "warning: %s: %v\n", source, err)
			}
		}
		return s.Test, nil
	}
	warnUnusedColumns(m, source, stderr)
	return m.ReadInput(source, true)
}

// runEval is the body of `fathom eval`.
func runEval(modelPath string, o evalOptions, stdout, stderr io.Writer) error {
	source, batch := o.source, o.batch
	o.model = modelPath
	m, err := modelfile.Load(modelPath)
	if err != nil {
		return err
	}
	t, err := evalTable(o, m, stderr)
	if err != nil {
		return err
	}
	if t.Rows == 0 {
		return fmt.Errorf("%s has no data rows", source)
	}
	met, err := m.Evaluate(t, batch)
	if err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	r := evalResult{Model: modelPath, Data: source, Rows: met.Samples}
	num := func(v float64) *float64 {
		if v != v {
			return nil
		}
		return &v
	}
	r.Loss, r.Accuracy, r.RMSE = num(met.Loss), num(met.Accuracy), num(met.RMSE)
	if jsonOut {
		return printJSON(r)
	}
	if m.Task == metrics.Regression {
		fmt.Fprintf(stdout, "%s on %s (%d rows): loss %.4f, RMSE %.4g\n", modelPath, source, met.Samples, met.Loss, met.RMSE)
	} else {
		fmt.Fprintf(stdout, "%s on %s (%d rows): loss %.4f, accuracy %.4f\n", modelPath, source, met.Samples, met.Loss, met.Accuracy)
	}
	return nil
}
