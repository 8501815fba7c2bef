package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/mljob"
)

// TestTuneMLFit tunes an ml fit config and checks each trial against
// fathom ml fit of its config alone.
func TestTuneMLFit(t *testing.T) {
	dir := t.TempDir()
	regs := []string{"0", "0.1", "1"}
	f := tuneFlags{grid: []string{"pipeline.3.params.regParam=" + strings.Join(regs, ",")}, out: dir, quiet: true, parallel: 2}
	if err := runTune(context.Background(), "../../examples/ml/iris-logreg.yaml", f, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	rows := readTuneRows(t, dir)
	if len(rows) != len(regs) {
		t.Fatalf("%d trials", len(rows))
	}
	for i, reg := range regs {
		cfg, err := mljob.Load("../../examples/ml/iris-logreg.yaml", []string{"pipeline.3.params.regParam=" + reg})
		if err != nil {
			t.Fatal(err)
		}
		res, err := mljob.Run(cfg, mljob.Options{Comm: ml.Single, NoSave: true})
		if err != nil {
			t.Fatal(err)
		}
		r := rows[i]
		if r.Status != "done" || r.Metric == nil || *r.Metric != res.Metrics["accuracy"] || r.Extra["logLoss"] != res.Metrics["logLoss"] {
			t.Errorf("regParam %s: trial %+v, alone %v", reg, r, res.Metrics)
		}
	}
	s := readTuneSummary(t, dir)
	if s.Kind != "ml" || s.Metric != "accuracy" || s.Mode != "max" {
		t.Errorf("summary %+v", s)
	}
	if _, err := ml.LoadModel(s.BestModel); err != nil {
		t.Errorf("best model: %v", err)
	}
}
