package train

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/runlog"
	"github.com/fathom-ml/fathom/tensor"
)

// trainerState is the part of a checkpoint that belongs to the loop.
type trainerState struct {
	History    []runlog.Epoch `json:"history"`
	LossSum    float64        `json:"loss_sum"`
	Correct    int            `json:"correct"`
	SqErr      float64        `json:"sq_err"`
	Seen       int            `json:"seen"`
	PartialSec float64        `json:"partial_seconds"`
	Best       *float64       `json:"best,omitempty"` // nil: nothing yet (±Inf)
	Bad        int            `json:"bad_epochs"`
	Stopped    bool           `json:"stopped"`
	Task       string         `json:"task"`
}

// rngOwner is a module with its own random stream (nn.Dropout).
type rngOwner interface{ RNG() *tensor.RNG }

// moduleRNGs returns the random streams of the modules of m by their
// dotted module path.
func moduleRNGs(m nn.Module) map[string]*tensor.RNG {
	out := map[string]*tensor.RNG{}
	var rec func(prefix string, m nn.Module)
	rec = func(prefix string, m nn.Module) {
		if o, ok := m.(rngOwner); ok && o.RNG() != nil {
			out[prefix] = o.RNG()
		}
		for _, c := range m.NamedChildren() {
			p := c.Name
			if prefix != "" {
				p = prefix + "." + c.Name
			}
			rec(p, c.Module)
		}
	}
	rec("", m)
	return out
}

// SaveCheckpoint writes the model, the optimizer, the random streams of
// the model's modules and the loop's position and metrics to path
// (atomically: a temp file renamed over path); with a ShardedCheckpoints
// strategy every process writes its part and the main process commits
// them (sharded.go).
func (t *Trainer) SaveCheckpoint(path string) error {
	o := &t.opts
	c := &modelfile.Checkpoint{Epoch: t.epoch, Step: t.step, GlobalStep: t.globalStep, Model: modelfile.StateEntries(o.Model)}
	st, err := checkpointState(o.Optimizer)
	if err != nil {
		return fmt.Errorf("checkpoint %s: optimizer state: %w", path, err)
	}
	for _, k := range st.TensorNames() {
		c.Optimizer = append(c.Optimizer, modelfile.TensorEntry(k, st.Tensors[k]))
	}
	if c.OptimizerState, err = json.Marshal(st); err != nil {
		return fmt.Errorf("checkpoint %s: optimizer state: %w", path, err)
	}
	c.RNG = map[string][]byte{}
	for name, r := range moduleRNGs(o.Model) {
		b, err := r.MarshalBinary()
		if err != nil {
			return fmt.Errorf("checkpoint %s: random stream of %q: %w", path, name, err)
		}
		c.RNG[name] = b
	}
	ts := trainerState{History: t.history, LossSum: t.partial.LossSum, Correct: t.partial.Correct,
		SqErr: t.partial.SqErr, Seen: t.partial.N, PartialSec: t.partialSec,
		Best: metrics.Finite(t.best), Bad: t.bad, Stopped: t.stopped, Task: o.Task.String()}
	if c.Trainer, err = json.Marshal(ts); err != nil {
		return fmt.Errorf("checkpoint %s: trainer state: %w", path, err)
	}
	if sc, ok := o.Strategy.(ShardedCheckpoints); ok {
		return t.saveSharded(sc, path, c)
	}
	if err := modelfile.WriteCheckpoint(path, c); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// LoadCheckpoint restores a checkpoint written by SaveCheckpoint for the
// same model architecture, optimizer kind and task; the next Fit resumes
// at the saved position and yields the same batches, updates and metrics
// as a run that was never interrupted. With a ShardedCheckpoints strategy
// every process loads its part of the step the manifest names.
func (t *Trainer) LoadCheckpoint(path string) error {
	if sc, ok := t.opts.Strategy.(ShardedCheckpoints); ok {
		return t.loadSharded(sc, path)
	}
	c, err := modelfile.ReadCheckpoint(path)
	if err != nil {
		return err
	}
	return t.restore(path, c)
}

func (t *Trainer) restore(path string, c *modelfile.Checkpoint) error {
	o := &t.opts
	var ts trainerState
	if err := json.Unmarshal(c.Trainer, &ts); err != nil {
		return fmt.Errorf("%s: trainer state: %w", path, err)
	}
	if ts.Task != o.Task.String() {
		return fmt.Errorf("%s: checkpoint of a %s run, trainer does %v", path, ts.Task, o.Task)
	}
	if c.Step > o.Train.Len() {
		return fmt.Errorf("%s: checkpoint at step %d of an epoch, but an epoch has %d batches (different data or batch size?)", path, c.Step, o.Train.Len())
	}
	var st optim.StateDict
	if err := json.Unmarshal(c.OptimizerState, &st); err != nil {
		return fmt.Errorf("%s: optimizer state: %w", path, err)
	}
	st.Tensors = map[string]*tensor.Tensor{}
	for _, e := range c.Optimizer {
		tt, err := modelfile.EntryTensor(e)
		if err != nil {
			return fmt.Errorf("%s: optimizer %w", path, err)
		}
		st.Tensors[e.Name] = tt
	}
	rngs := moduleRNGs(o.Model)
	if len(rngs) != len(c.RNG) {
		return fmt.Errorf("%s: checkpoint has %d random streams, model has %d", path, len(c.RNG), len(rngs))
	}
	for name := range rngs {
		if _, ok := c.RNG[name]; !ok {
			return fmt.Errorf("%s: checkpoint has no random stream for module %q", path, name)
		}
	}
	// Everything decoded; now change state.
	if err := modelfile.LoadEntries(o.Model, c.Model); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := o.Optimizer.LoadState(&st); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for name, r := range rngs {
		if err := r.UnmarshalBinary(c.RNG[name]); err != nil {
			return fmt.Errorf("%s: random stream of %q: %w", path, name, err)
		}
	}
	t.epoch, t.step, t.globalStep = c.Epoch, c.Step, c.GlobalStep
	t.history = ts.History
	t.partial = metrics.Accumulator{Task: o.Task, LossSum: ts.LossSum, Correct: ts.Correct, SqErr: ts.SqErr, N: ts.Seen}
	if _, sharded := o.Strategy.(ShardedCheckpoints); !sharded && !o.Strategy.IsMain() {
		// The sums are every process's so far (checkpointMidEpoch): the
		// main process carries them.
		t.partial = metrics.Accumulator{Task: o.Task}
	}
	t.partialSec = ts.PartialSec
	t.bad, t.stopped = ts.Bad, ts.Stopped
	if ts.Best != nil {
		t.best = *ts.Best
	} else if runlog.HigherIsBetter(o.EarlyStopping.Monitor) {
		t.best = math.Inf(-1)
	} else {
		t.best = math.Inf(1)
	}
	return nil
}
