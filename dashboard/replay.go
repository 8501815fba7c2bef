package dashboard

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fathom-ml/fathom/internal/atomicfile"
)

// StateFile is the name of the file a job writes into its output
// directory with everything its board held (WriteState): what `fathom
// dashboard RUN_DIR` replays, steps included.
const StateFile = "dashboard.json"

// MetricsFile is the per-epoch metrics file of a training run; a run
// directory without a StateFile is replayed from it (epochs only).
const MetricsFile = "metrics.csv"

// maxReplayBytes bounds the files LoadRun reads: a StateFile holds at
// most DefaultMaxSteps points and a metrics file one line an epoch, so
// anything larger is not one of them.
const maxReplayBytes = 256 << 20

// UnmarshalJSON reads a state as MarshalJSON writes it (steps as columns).
func (s *State) UnmarshalJSON(b []byte) error {
	type plain State
	var v struct {
		plain
		Steps map[string][]*float64 `json:"steps"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = State(v.plain)
	s.Steps = nil
	cols := v.Steps
	n := len(cols["step"])
	for name, c := range cols {
		if len(c) != n {
			return fmt.Errorf("steps: column %q has %d values, step has %d", name, len(c), n)
		}
	}
	at := func(name string, i int) float64 {
		c := cols[name]
		if c == nil || c[i] == nil {
			if name == "loss" || name == "lr" || name == "samples_per_sec" {
				return math.NaN()
			}
			return 0
		}
		return *c[i]
	}
	s.Steps = make([]Step, n)
	for i := range n {
		s.Steps[i] = Step{Step: int(at("step", i)), Epoch: int(at("epoch", i)), Batch: int(at("batch", i)),
			Batches: int(at("batches", i)), Loss: at("loss", i), LR: at("lr", i), SamplesPerSec: at("samples_per_sec", i),
			Compute: at("compute", i), Comm: at("comm", i), Data: at("data", i), T: at("t", i), N: max(1, int(at("n", i)))}
		if i > 0 && s.Steps[i].Step <= s.Steps[i-1].Step {
			return fmt.Errorf("steps: point %d (step %d) does not follow step %d", i+1, s.Steps[i].Step, s.Steps[i-1].Step)
		}
	}
	return nil
}

// Restore returns a board holding the state s (a finished run's, read
// back from its file), which keeps at most maxSteps step points
// (DefaultMaxSteps when maxSteps <= 0; more are merged as a live board
// merges them).
func Restore(s State, maxSteps int) *Board {
	b := NewBoard(maxSteps)
	info := s.Info
	if info.Started.IsZero() {
		info.Started = b.start
	}
	b.start = info.Started
	b.info = info
	b.infoVer = 1
	for _, p := range s.Steps {
		b.steps.add(p)
		// a merged point stands for p.N steps: commit it as it is
		b.steps.flush()
	}
	b.epochs = append(b.epochs, s.Epochs...)
	for _, w := range s.Workers {
		b.workers[w.Rank] = w
	}
	b.workersVer = 1
	for _, t := range s.Trials {
		b.trials[t.ID] = t
	}
	b.trialsVer = 1
	for _, p := range s.Partitions {
		b.partsVer++
		if _, ok := b.parts[p.Name]; !ok {
			b.partsOrder = append(b.partsOrder, p.Name)
		}
		b.parts[p.Name] = &versioned[Partition]{p, b.partsVer}
	}
	b.status = s.Status
	return b
}

// WriteState writes s to path as JSON (steps as columns), through a
// temporary file renamed into place.
func WriteState(path string, s State) error {
	data, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	return atomicfile.WriteBytes(path, append(data, '\n'))
}

// LoadRun reads a finished (or interrupted) run for replay: path is a run
// directory (its StateFile, else its MetricsFile), or one of those files.
// The board's title is the run's directory unless its state names one.
func LoadRun(path string) (*Board, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	file := path
	if st.IsDir() {
		file = filepath.Join(path, StateFile)
		if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
			file = filepath.Join(path, MetricsFile)
			if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("%s: no %s or %s: not a run directory", path, StateFile, MetricsFile)
			}
		}
	}
	data, err := readBounded(file)
	if err != nil {
		return nil, err
	}
	var s State
	if strings.HasSuffix(file, ".json") {
		if err := json.Unmarshal(data, &s); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	} else {
		s, err = ReadMetricsCSV(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		s.Status = Status{Done: true}
		if n := len(s.Epochs); n > 0 {
			s.Status.T = s.Epochs[n-1].T // the epochs' seconds, summed
		}
	}
	if s.Info.Title == "" {
		s.Info.Title = RunName(path)
	}
	return Restore(s, 0), nil
}

// RunName names a run after its directory: path's base name, or that of
// the directory holding the file path.
func RunName(path string) string {
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		path = filepath.Dir(path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	return filepath.Base(abs)
}

func readBounded(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxReplayBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(data) > maxReplayBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB: not a run's file", file, maxReplayBytes>>20)
	}
	return data, nil
}

// ReadMetricsCSV reads a training run's metrics.csv into a state of
// epochs: columns epoch, train_<metric>, <split>_<metric> (the
// evaluation split: val, test, ...), lr, seconds and eval_seconds; other
// columns are ignored, empty cells are missing values. The file has no
// step counts, so each epoch stands at its number of steps when
// the steps per epoch are unknown: the page's step axis counts epochs.
func ReadMetricsCSV(r io.Reader) (State, error) {
	var s State
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return s, fmt.Errorf("header: %w", err)
	}
	head = slices.Clone(head) // the reader reuses its record
	type col struct {
		split, metric string // "train"/"eval", "loss"
		field         string // "epoch", "lr", "seconds", "eval_seconds"
	}
	cols := make([]col, len(head))
	evalSplit, headline := "", ""
	seen := map[string]int{}
	for i, h := range head {
		h = strings.TrimSpace(h)
		if j, dup := seen[h]; dup {
			return s, fmt.Errorf("header: column %q appears twice (columns %d and %d)", h, j+1, i+1)
		}
		seen[h] = i
		switch h {
		case "epoch", "lr", "seconds", "eval_seconds", "steps":
			cols[i].field = h
			continue
		}
		split, metric, ok := strings.Cut(h, "_")
		if !ok || metric == "" {
			continue
		}
		if split == "train" {
			cols[i] = col{split: "train", metric: metric}
		} else {
			if evalSplit != "" && split != evalSplit {
				continue // one evaluation split; a second is ignored
			}
			evalSplit = split
			cols[i] = col{split: "eval", metric: metric}
		}
		if metric != "loss" && headline == "" {
			headline = metric
		}
	}
	if _, ok := seen["epoch"]; !ok {
		return s, errors.New("header: no epoch column")
	}
	_, hasSteps := seen["steps"]
	for row := 2; ; row++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return s, err
		}
		e := Epoch{Train: map[string]float64{}}
		for i, v := range rec {
			v = strings.TrimSpace(v)
			if v == "" || (cols[i].field == "" && cols[i].split == "") {
				continue
			}
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return s, fmt.Errorf("row %d, column %d (%s): %q is not a number", row, i+1, head[i], v)
			}
			switch c := cols[i]; {
			case c.field == "epoch":
				if x != math.Trunc(x) || x < 1 || x > 1e9 {
					return s, fmt.Errorf("row %d, column %d (epoch): %q is not an epoch number", row, i+1, v)
				}
				e.Epoch = int(x)
			case c.field == "steps":
				e.Steps = int(x)
			case c.field == "lr":
				e.LR = x
			case c.field == "seconds":
				e.Seconds = x
			case c.field == "eval_seconds":
				e.EvalSeconds = x
			case math.IsNaN(x) || math.IsInf(x, 0):
			case c.split == "train":
				e.Train[c.metric] = x
			default:
				if e.Eval == nil {
					e.Eval = map[string]float64{}
				}
				e.Eval[c.metric] = x
			}
		}
		if e.Epoch == 0 {
			return s, fmt.Errorf("row %d: no epoch number", row)
		}
		if n := len(s.Epochs); n > 0 && e.Epoch <= s.Epochs[n-1].Epoch {
			return s, fmt.Errorf("row %d: epoch %d does not follow epoch %d", row, e.Epoch, s.Epochs[n-1].Epoch)
		}
		if !hasSteps {
			e.Steps = e.Epoch
		}
		t := e.Seconds + e.EvalSeconds
		if n := len(s.Epochs); n > 0 {
			t += s.Epochs[n-1].T
		}
		e.T = t
		s.Epochs = append(s.Epochs, e)
	}
	if headline == "" {
		headline = "loss"
	}
	s.Info = RunInfo{Kind: "train", Headline: headline, EvalSplit: evalSplit, Epochs: len(s.Epochs)}
	if !hasSteps {
		s.Info.StepsPerEpoch = 1
	}
	if headline == "accuracy" {
		s.Info.Task = "classification"
	} else if headline == "rmse" {
		s.Info.Task = "regression"
	}
	return s, nil
}
