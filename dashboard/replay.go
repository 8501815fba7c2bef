package dashboard

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/internal/atomicfile"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/runlog"
)

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

// LoadRun reads a finished (or interrupted) run for replay
// (runlog.ReadRun): path is a run directory or one of its files. The
// board holds the run's dashboard state when it has one, else the epochs
// of its metrics file. Its title is the run's directory unless its state
// names one.
func LoadRun(path string) (*Board, error) {
	run, err := runlog.ReadRun(path)
	if err != nil {
		return nil, err
	}
	var s State
	if run.Dashboard != nil {
		if err := json.Unmarshal(run.Dashboard, &s); err != nil {
			return nil, fmt.Errorf("%s: %w", run.DashboardPath, err)
		}
	} else {
		s = MetricsState(run.Metrics)
	}
	if s.Info.Title == "" {
		s.Info.Title = run.Name
	}
	return Restore(s, 0), nil
}

// MetricsState returns the state of a finished run that only its metrics
// file tells: its epochs, and the run done when the last ended. Without
// step counts in the file, each epoch stands at its number of steps: the
// page's step axis counts epochs.
func MetricsState(l runlog.MetricsLog) State {
	var s State
	for _, r := range l.Epochs {
		e := EpochFrom(r)
		if !l.HasSteps {
			e.Steps = e.Epoch
		}
		e.T = e.Seconds + e.EvalSeconds
		if n := len(s.Epochs); n > 0 {
			e.T += s.Epochs[n-1].T
		}
		s.Epochs = append(s.Epochs, e)
	}
	s.Info = RunInfo{Kind: "train", Headline: l.Headline, EvalSplit: l.EvalSplit, Epochs: len(s.Epochs)}
	if !l.HasSteps {
		s.Info.StepsPerEpoch = 1
	}
	if task, ok := l.Task(); ok {
		s.Info.Task = task.String()
	}
	s.Status = Status{Done: true}
	if n := len(s.Epochs); n > 0 {
		s.Status.T = s.Epochs[n-1].T // the epochs' seconds, summed
	}
	return s
}

// EpochFrom returns the board's record of a run's epoch: its finite
// metrics by name.
func EpochFrom(r runlog.Epoch) Epoch {
	e := Epoch{Epoch: r.Epoch, Steps: r.Steps, Train: metricMap(r.Train), LR: r.LR,
		Seconds: r.Seconds, EvalSeconds: r.EvalSeconds}
	if r.Eval != nil {
		e.Eval = metricMap(*r.Eval)
	}
	return e
}

// metricMap returns the finite metrics of m by name.
func metricMap(m metrics.Metrics) map[string]float64 {
	out := map[string]float64{}
	for _, name := range []string{"loss", "accuracy", "rmse"} {
		if v, ok := m.Get(name); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			out[name] = v
		}
	}
	return out
}
