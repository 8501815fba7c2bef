package main

import (
	"fmt"
	"io"
	"os"
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

func init() {
	var source, split string
	var batch int
	cmd := &cobra.Command{
		Use:   "eval MODEL --data SOURCE",
		Short: "Score a trained model on labelled data",
		Long: `Eval loads a model file written by fathom train and reports its loss and
accuracy (classification) or RMSE (regression) on labelled data. SOURCE is

  CONFIG.yaml        the test split of a training config's data (the same
                     held-out rows fathom train scored)
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
			return runEval(args[0], source, split, batch, os.Stdout)
		},
	}
	cmd.Flags().StringVar(&source, "data", "", "labelled data: CONFIG.yaml, a CSV/Parquet file, iris or fashion-mnist (required)")
	cmd.Flags().StringVar(&split, "split", "test", "for fashion-mnist: test or train")
	cmd.Flags().IntVar(&batch, "batch", 1000, "rows per forward pass")
	cmd.MarkFlagRequired("data")
	rootCmd.AddCommand(cmd)
}

// evalTable loads the labelled rows (raw features) named by source.
func evalTable(source, split string, m *modelfile.Model) (*data.Table, error) {
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
		cfg, err := job.LoadConfig(source, []string{"data.standardize=false"})
		if err != nil {
			return nil, err
		}
		s, err := cfg.LoadData()
		if err != nil {
			return nil, err
		}
		return s.Test, nil
	}
	return m.ReadInput(source, true)
}

// runEval is the body of `fathom eval`.
func runEval(modelPath, source, split string, batch int, stdout io.Writer) error {
	m, err := modelfile.Load(modelPath)
	if err != nil {
		return err
	}
	t, err := evalTable(source, split, m)
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
