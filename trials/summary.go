package trials

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fathom-ml/fathom/internal/atomicfile"
)

// Summary is a search's summary.json and the last `--json` line.
type Summary struct {
	Kind   string `json:"kind"` // train or ml
	Metric string `json:"metric"`
	Mode   string `json:"mode"`
	Trials int    `json:"trials"`
	// Interrupted says the search was stopped (Ctrl-C) before every
	// planned trial ran: the table holds those that finished.
	Interrupted bool           `json:"interrupted,omitempty"`
	Done        int            `json:"done"`
	Stopped     int            `json:"stopped"`
	Failed      int            `json:"failed"`
	Processes   int            `json:"processes"`
	Parallel    int            `json:"parallel"`
	Seconds     float64        `json:"seconds"`
	Best        map[string]any `json:"best"`
	BestModel   string         `json:"best_model,omitempty"`
	CSV         string         `json:"csv"`
	JSONL       string         `json:"jsonl"`
	Plot        string         `json:"plot"`
}

// TrialLine is the progress line of a finished trial.
func TrialLine(r Result, metric string, n, procs int) string {
	var ps []string
	for _, p := range r.Params {
		ps = append(ps, p.Key+"="+p.Value)
	}
	s := fmt.Sprintf("trial %d/%d %s", r.ID, n, r.Status)
	switch r.Status {
	case Failed:
		s += ": " + r.Error
	default:
		s += fmt.Sprintf(": %s %.4g", metric, r.Metric)
		if r.Epochs > 0 {
			s += fmt.Sprintf(" after %d epoch(s)", r.Epochs)
		}
	}
	s += fmt.Sprintf(" (%s) %.2f s", strings.Join(ps, " "), r.Seconds)
	if procs > 1 {
		s += fmt.Sprintf(" [rank %d]", r.Rank)
	}
	return s
}

// write writes the table, the plot, the best model (model: its bytes
// when another process trained it) and the summary, then prints the
// summary.
func (s *search) write(rs []Result, model []byte, planned int) error {
	out, t := s.o.Out, s.target
	SortByID(rs)
	sum := Summary{Kind: t.Kind, Metric: t.Metric, Mode: t.Mode(),
		Trials: len(rs), Interrupted: len(rs) < planned, Processes: s.procs, Parallel: s.par, Seconds: time.Since(s.start).Seconds(),
		CSV: filepath.Join(out, "trials.csv"), JSONL: filepath.Join(out, "trials.jsonl"), Plot: filepath.Join(out, "trials.png")}
	for _, r := range rs {
		switch r.Status {
		case Done:
			sum.Done++
		case Stopped:
			sum.Stopped++
		case Failed:
			sum.Failed++
		}
	}
	if err := WriteCSV(sum.CSV, rs, t.Metric); err != nil {
		return err
	}
	if err := WriteJSONL(sum.JSONL, rs, t.Metric); err != nil {
		return err
	}
	if err := WritePlot(sum.Plot, rs, t.Metric); err != nil {
		return err
	}
	if b := Best(rs, t.LargerBetter); b >= 0 {
		best := rs[b]
		params := map[string]any{}
		for _, p := range best.Params {
			params[p.Key] = p.Value
		}
		sum.Best = map[string]any{"trial": best.ID, "params": params, "metric": best.Metric, "epochs": best.Epochs}
		sum.BestModel = filepath.Join(out, "best.safetensors")
		if model == nil {
			var err error
			if model, err = os.ReadFile(best.Model); err != nil {
				return fmt.Errorf("best model: %w", err)
			}
		}
		if err := atomicfile.WriteBytes(sum.BestModel, model); err != nil {
			return err
		}
	}
	b, err := json.Marshal(sum)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(filepath.Join(out, "summary.json"), append(b, '\n')); err != nil {
		return err
	}
	return s.print(sum, b)
}

// print prints the summary: its JSON with SearchOptions.JSON, else a
// sentence.
func (s *search) print(sum Summary, js []byte) error {
	stdout := s.o.Stdout
	if s.o.JSON {
		fmt.Fprintf(stdout, "%s\n", js)
		return nil
	}
	if sum.Best == nil {
		fmt.Fprintf(stdout, "%d trials, none completed (%d failed); table %s\n", sum.Trials, sum.Failed, sum.CSV)
		return nil
	}
	fmt.Fprintf(stdout, "%d trials (%d done, %d stopped, %d failed) in %.2f s; best trial %d: %s %.6g; model %s, table %s\n",
		sum.Trials, sum.Done, sum.Stopped, sum.Failed, sum.Seconds, sum.Best["trial"], sum.Metric, sum.Best["metric"], sum.BestModel, sum.CSV)
	return nil
}
