package mljob

import (
	"fmt"
	"strings"
	"sync"

	"github.com/fathom-ml/fathom/dashboard"
	"github.com/fathom-ml/fathom/ml"
)

// dashboardStart tells board (nil: nothing) what the job is and returns
// the progress function for the fit: each solver iteration becomes a step
// whose loss is the objective, its "epoch" the pipeline stage (from 1).
func (c *Config) dashboardStart(board *dashboard.Board, pipe *ml.Pipeline, evs []ml.Evaluator, rows, ranks int) func(ml.Progress) {
	if board == nil {
		return nil
	}
	var stages []string
	for i, s := range pipe.Stages {
		stages = append(stages, fmt.Sprintf("%d. %s", i+1, s.Type()))
	}
	headline := "loss"
	if len(evs) > 0 {
		headline = evs[0].Metric()
	}
	board.SetInfo(dashboard.RunInfo{Title: c.file, Kind: "ml", Config: string(c.text), Model: strings.Join(stages, "\n"),
		Headline: headline, EvalSplit: "test", Epochs: 1, TrainRows: rows, WorldSize: ranks, Machine: dashboard.LocalMachine()})
	var mu sync.Mutex
	step := 0
	return func(p ml.Progress) {
		mu.Lock()
		defer mu.Unlock()
		step++
		board.AddStep(dashboard.Step{Step: step, Epoch: p.Stage + 1, Batch: p.Iteration, Loss: p.Loss})
	}
}
