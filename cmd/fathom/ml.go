package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/fathom-ml/fathom/comm/join"
	"github.com/fathom-ml/fathom/dashboard"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/mljob"
)

// mlCmd groups classic machine learning: `fathom ml fit|predict|eval`.
var mlCmd = &cobra.Command{
	Use:   "ml",
	Short: "Classic machine learning (Spark ML's pipelines): fit, predict, eval",
	Long: `Classic machine learning with Spark ML's design: pipelines of feature
transformers and estimators (LogisticRegression, LinearRegression, LinearSVC,
NaiveBayes, GeneralizedLinearRegression, MultilayerPerceptronClassifier, ...),
evaluators and grid search with cross-validation. See docs/ml.md.`,
}

func init() {
	rootCmd.AddCommand(mlCmd)

	var sets []string
	var quiet bool
	var dash dashboardFlags
	fit := &cobra.Command{
		Use:   "fit CONFIG.yaml",
		Short: "Fit the pipeline a YAML config describes (with optional grid search)",
		Long: `Fit reads a YAML config (data, pipeline, evaluator, tuning, output), fits the
pipeline on the training rows — or searches the tuning grid with a
CrossValidator or TrainValidationSplit and refits the best point on all
training rows — scores it on the held-out rows and writes into output.dir
(default runs/<config name>):

  model.safetensors  the fitted PipelineModel (fathom ml predict/eval load it)
  metrics.json       metrics, fit time, rows, tuning results

Unknown keys, stage params included, are errors naming the key and its line.
--set overrides a key with a YAML value (list items by index:
--set pipeline.2.params.regParam=0.1). Under fathom run -n N each rank reads
its share of the rows and every fit is distributed; rank 0 writes the files.
With --json the last stdout line is {"metrics": {...}, "fit_seconds": ...,
"model_path": ...} (and rows, ranks, iterations, tuning).

--dashboard serves a web page of the fit (each solver iteration's objective,
then the metrics); every fit also writes dashboard.json into output.dir for
fathom dashboard to replay.`,
		Example: `  fathom ml fit examples/ml/iris-logreg.yaml
  fathom ml fit examples/ml/iris-cv.yaml --set tuning.crossValidator.parallelism=2 --json
  fathom run -n 2 -- fathom ml fit examples/ml/iris-logreg.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var log io.Writer = os.Stderr
			if quiet {
				log = nil
			}
			return runMLFit(cmd, args[0], sets, log, dash)
		},
	}
	dash.register(fit)
	fit.Flags().StringArrayVar(&sets, "set", nil, "override a config key: key.path=value (repeatable)")
	fit.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress lines on stderr")
	mlCmd.AddCommand(fit)

	var out string
	var keep []string
	predict := &cobra.Command{
		Use:   "predict MODEL DATA... --out FILE",
		Short: "Write a fitted model's predictions and probabilities for CSV or Parquet data",
		Long: `Predict loads a model written by fathom ml fit, transforms the rows of the
data files (CSV, or Parquet files or directories, read one after the other)
and writes to --out, as CSV or Parquet by its extension: the prediction
column, the class probabilities one column each (probability_0, ...) and any
string column the model adds (a predicted label). --keep puts input
columns (an id to join the predictions back on) first.`,
		Example: `  fathom ml predict runs/iris-logreg/model.safetensors new.csv --out predictions.csv
  fathom ml predict runs/iris-logreg/model.safetensors new.csv --keep id --out predictions.parquet`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMLPredict(args[0], args[1:], out, keep)
		},
	}
	predict.Flags().StringVarP(&out, "out", "o", "", "output file (.csv or .parquet)")
	predict.Flags().StringSliceVar(&keep, "keep", nil, "input columns to copy into the output, first (e.g. --keep id,date)")
	mlCmd.AddCommand(predict)

	var evType string
	var evParams []string
	eval := &cobra.Command{
		Use:   "eval MODEL DATA...",
		Short: "Score a fitted model on labelled CSV or Parquet data",
		Long: `Eval loads a model written by fathom ml fit, transforms the data and scores
the predictions with an evaluator: --evaluator names its type (default
MulticlassClassificationEvaluator when the model outputs probabilities,
else RegressionEvaluator) and --param sets its params (metricName=f1, ...).
Prints "metric: value", or with --json {"metrics": {metric: value}, "rows": n}.`,
		Example: `  fathom ml eval runs/iris-logreg/model.safetensors test.csv --param metricName=f1`,
		Args:    cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMLEval(args[0], args[1:], evType, evParams)
		},
	}
	eval.Flags().StringVar(&evType, "evaluator", "", "evaluator type (MulticlassClassificationEvaluator, BinaryClassificationEvaluator, RegressionEvaluator)")
	eval.Flags().StringArrayVar(&evParams, "param", nil, "evaluator param: key=value (repeatable)")
	mlCmd.AddCommand(eval)
}

func runMLFit(cmd *cobra.Command, path string, sets []string, log io.Writer, dash dashboardFlags) error {
	cfg, err := mljob.Load(path, sets)
	if err != nil {
		return err
	}
	srv, err := dash.start(cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	var board *dashboard.Board
	if srv != nil {
		board = srv.Board()
		ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		defer dash.finish(ctx, srv, cmd.ErrOrStderr())
	}
	job, err := join.FromEnv(cmd.Context(), join.Options{Group: true})
	if err != nil {
		return err
	}
	defer job.Close()
	c := mljob.Comm(job)
	if c.Rank() != 0 {
		log = nil
	}
	res, err := mljob.Run(cfg, mljob.Options{Comm: c, Log: log, Dashboard: board})
	if err != nil {
		return err
	}
	if c.Rank() != 0 {
		return nil
	}
	if jsonOut {
		return printJSON(res)
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(res.Metrics)) {
		parts = append(parts, fmt.Sprintf("%s %.6g", k, res.Metrics[k]))
	}
	fmt.Printf("fit in %.3f s on %d rows; %s on the %s rows; model %s\n",
		res.FitSeconds, res.TrainRows, strings.Join(parts, ", "), res.MetricsSplit, res.ModelPath)
	return nil
}

func runMLPredict(modelPath string, paths []string, out string, keep []string) error {
	if out == "" {
		return fmt.Errorf("ml predict: --out FILE is required (.csv or .parquet)")
	}
	m, err := ml.LoadModel(modelPath)
	if err != nil {
		return err
	}
	f, err := mljob.ReadAll(paths, mljob.ReadOptions{})
	if err != nil {
		return err
	}
	for _, k := range keep {
		if !f.Has(k) {
			return fmt.Errorf("ml predict: --keep %s: no such input column (columns: %s)", k, strings.Join(f.Names(), ", "))
		}
	}
	pred, err := m.Transform(f)
	if err != nil {
		return err
	}
	cols, err := mljob.PredictionColumns(f, pred)
	if err != nil {
		return err
	}
	cols = append(slices.Clone(keep), cols...)
	if err := mljob.WritePredictions(out, pred, cols); err != nil {
		return err
	}
	if jsonOut {
		return printJSON(map[string]any{"rows": pred.Len(), "out": out})
	}
	fmt.Fprintf(os.Stderr, "wrote %d predictions to %s\n", pred.Len(), out)
	return nil
}

func runMLEval(modelPath string, paths []string, evType string, params []string) error {
	m, err := ml.LoadModel(modelPath)
	if err != nil {
		return err
	}
	f, err := mljob.ReadAll(paths, mljob.ReadOptions{})
	if err != nil {
		return err
	}
	pred, err := m.Transform(f)
	if err != nil {
		return err
	}
	if evType == "" {
		evType = mljob.DefaultEvaluator(pred)
	}
	ev, err := mljob.NewEvaluator(evType, params)
	if err != nil {
		return err
	}
	v, err := ev.Evaluate(pred, ml.Single)
	if err != nil {
		return err
	}
	if jsonOut {
		return printJSON(map[string]any{"metrics": map[string]float64{ev.Metric(): v}, "rows": pred.Len()})
	}
	fmt.Printf("%s: %.6g (%d rows)\n", ev.Metric(), v, pred.Len())
	return nil
}
