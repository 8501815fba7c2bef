// Pipeline is the Go API of fathom's classic ML in one program: read a CSV
// into a frame, build a pipeline of typed stages, choose a parameter by
// cross-validation, evaluate on held-out rows, save the model, load it
// back and predict.
//
//	go run ./examples/ml/pipeline
//	fathom run -n 2 -- go run ./examples/ml/pipeline   (each rank its share of the rows)
//
// Under `fathom run -n N` the program joins the job's process group: each
// rank keeps its contiguous share of the rows, every fit and evaluation is
// distributed, and every rank gets the same model; rank 0 saves it.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/fathom-ml/fathom/comm/join"
	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/bayes"
	"github.com/fathom-ml/fathom/ml/eval"
	"github.com/fathom-ml/fathom/ml/feature"
	"github.com/fathom-ml/fathom/ml/mljob"
	"github.com/fathom-ml/fathom/ml/tune"
)

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	// One process, or this rank of a `fathom run -n N` job.
	job, err := join.FromEnv(context.Background(), join.Options{Group: true})
	if err != nil {
		return err
	}
	defer job.Close()
	comm := mljob.Comm(job)

	// The rows: word counts of six words and a topic, this rank's share.
	path := filepath.Join(exampleDir(), "data", "documents.csv")
	frame, err := mljob.ReadFrame([]string{path}, mljob.ReadOptions{}, comm.Rank(), comm.Size())
	if err != nil {
		return err
	}
	// Hold out a quarter of the rows for the final test (a hash of each
	// row's index in the file: the same rows on any number of ranks).
	train, test, err := mljob.HoldOut(frame, comm, 0.25, 1)
	if err != nil {
		return err
	}

	// The pipeline: typed stages with Spark ML's parameters.
	indexer := feature.NewStringIndexer()
	indexer.InputCol, indexer.OutputCol = "topic", ml.LabelCol
	assembler := feature.NewVectorAssembler("w_game", "w_vote", "w_data", "w_team", "w_study", "w_law")
	nb := bayes.NewNaiveBayes() // multinomial, smoothing 1
	pipeline := ml.NewPipeline(indexer, assembler, nb)

	// A grid over the smoothing of the naive Bayes stage (stage 2), chosen
	// by 3-fold cross-validation on accuracy.
	grid := tune.NewParamGridBuilder().
		AddGrid(tune.Axis("smoothing", func(e ml.Estimator, v float64) error {
			e.(*ml.Pipeline).Stages[2].(*bayes.NaiveBayes).Smoothing = v
			return nil
		}, 0.01, 0.1, 1, 10, 100)).
		Build()
	accuracy := eval.NewMulticlassClassificationEvaluator()
	accuracy.MetricName = "accuracy"
	cv := tune.NewCrossValidator(pipeline, grid, accuracy)
	cv.Parallelism = 2

	fitted, err := cv.Fit(ml.Data{Frame: train, Comm: comm})
	if err != nil {
		return err
	}
	result := fitted.(*tune.ValidatorModel)
	for i, m := range result.AvgMetrics {
		say(comm, "  %-16s cross-validated accuracy %.4f\n", result.Grid[i], m)
	}
	say(comm, "best: %s\n", result.BestParams)

	// The best model, refit on all training rows, on the held-out rows.
	predictions, err := result.BestModel.Transform(test)
	if err != nil {
		return err
	}
	acc, err := accuracy.Evaluate(predictions, comm)
	if err != nil {
		return err
	}
	say(comm, "test accuracy %.4f\n", acc)

	// Save (rank 0), load back and predict one new document.
	if comm.Rank() != 0 {
		return nil
	}
	dir, err := os.MkdirTemp("", "fathom-ml-pipeline-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	modelPath := filepath.Join(dir, "model.safetensors")
	if err := ml.SaveModel(modelPath, result.BestModel); err != nil {
		return err
	}
	loaded, err := ml.LoadModel(modelPath)
	if err != nil {
		return err
	}
	doc, err := data.NewFrame(
		data.NewColumn("w_game", []float64{0}, nil), data.NewColumn("w_vote", []float64{1}, nil),
		data.NewColumn("w_data", []float64{6}, nil), data.NewColumn("w_team", []float64{0}, nil),
		data.NewColumn("w_study", []float64{4}, nil), data.NewColumn("w_law", []float64{1}, nil))
	if err != nil {
		return err
	}
	// A new document has no topic: skip the StringIndexer stage and keep
	// its labels to name the predicted class.
	stages := loaded.(*ml.PipelineModel).Stages
	out, err := (&ml.PipelineModel{Stages: stages[1:]}).Transform(doc)
	if err != nil {
		return err
	}
	pred, err := out.Float64s(ml.PredictionCol)
	if err != nil {
		return err
	}
	labels := stages[0].(*feature.StringIndexerModel).Labels
	fmt.Printf("a document with data ×6, study ×4: %s\n", labels[int(pred[0])])
	return nil
}

// say prints on rank 0 only.
func say(c ml.Comm, format string, args ...any) {
	if c.Rank() == 0 {
		fmt.Printf(format, args...)
	}
}

// exampleDir is examples/ml, found from the working directory (the
// repository root or examples/ml/pipeline).
func exampleDir() string {
	for _, d := range []string{"examples/ml", "..", "."} {
		if _, err := os.Stat(filepath.Join(d, "data", "documents.csv")); err == nil {
			return d
		}
	}
	return "examples/ml"
}
