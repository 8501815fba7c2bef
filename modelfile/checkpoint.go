package modelfile

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/fathom-ml/fathom/safetensors"
)

// A checkpoint is one safetensors file holding everything needed to resume
// training exactly: the model's tensors under "model/<name>", the
// optimizer's buffers under "optim/<key>", and a JSON document in the
// metadata (CheckpointKey) with the position (epoch, step), the
// optimizer's scalar state, the random generators' states and the
// trainer's own state. It is written to a temporary file and renamed, so a
// crash while saving leaves the previous checkpoint intact.

// CheckpointKey is the __metadata__ key holding a checkpoint's JSON state.
const CheckpointKey = "fathom.checkpoint"

// CheckpointFormat is written in Checkpoint.Format.
const CheckpointFormat = "fathom-checkpoint/1"

const (
	modelPrefix = "model/"
	optimPrefix = "optim/"
)

// Checkpoint is a training run's saved state.
type Checkpoint struct {
	// Format is CheckpointFormat.
	Format string `json:"format"`
	// Epoch and Step are the position to resume at: the next step (0-based)
	// of the next epoch (0-based) to run. GlobalStep counts the optimizer
	// steps taken so far.
	Epoch      int `json:"epoch"`
	Step       int `json:"step"`
	GlobalStep int `json:"global_step"`
	// Model holds the model's state dict.
	Model []safetensors.Entry `json:"-"`
	// Optimizer holds the optimizer's tensors (moment estimates, momentum
	// buffers) and OptimizerState its JSON state (step counts,
	// hyperparameters), as the optimizer package encodes them.
	Optimizer      []safetensors.Entry `json:"-"`
	OptimizerState json.RawMessage     `json:"optimizer,omitempty"`
	// RNG holds the serialized state of each named random generator (such
	// as a dropout layer's stream).
	RNG map[string][]byte `json:"rng,omitempty"`
	// Trainer holds the training loop's own state (metrics so far, early
	// stopping counters), opaque to this package.
	Trainer json.RawMessage `json:"trainer,omitempty"`
	// Architecture, if set, is the model's architecture, so a checkpoint
	// can also be turned into a model file.
	Architecture *Architecture `json:"architecture,omitempty"`
}

// WriteCheckpoint writes c to path atomically.
func WriteCheckpoint(path string, c *Checkpoint) error {
	if c.Format == "" {
		c.Format = CheckpointFormat
	}
	entries := make([]safetensors.Entry, 0, len(c.Model)+len(c.Optimizer))
	for _, e := range c.Model {
		e.Name = modelPrefix + e.Name
		entries = append(entries, e)
	}
	for _, e := range c.Optimizer {
		e.Name = optimPrefix + e.Name
		entries = append(entries, e)
	}
	js, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("%s: encoding the checkpoint state: %w", path, err)
	}
	return safetensors.WriteFile(path, entries, map[string]string{CheckpointKey: string(js)})
}

// ReadCheckpoint reads a checkpoint written by WriteCheckpoint. A
// truncated or corrupted file is an error wrapping ErrFormat that names
// the file.
func ReadCheckpoint(path string) (*Checkpoint, error) {
	f, err := safetensors.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading checkpoint: %w", err)
	}
	js, ok := f.Metadata[CheckpointKey]
	if !ok {
		return nil, fmt.Errorf("%s: not a fathom checkpoint (no %q metadata)", path, CheckpointKey)
	}
	var c Checkpoint
	if err := json.Unmarshal([]byte(js), &c); err != nil {
		return nil, fmt.Errorf("%s: checkpoint state: %w", path, err)
	}
	if c.Format != CheckpointFormat {
		return nil, fmt.Errorf("%s: unsupported checkpoint format %q (want %q)", path, c.Format, CheckpointFormat)
	}
	if c.Epoch < 0 || c.Step < 0 || c.GlobalStep < 0 {
		return nil, fmt.Errorf("%s: checkpoint position epoch %d, step %d, global step %d is negative", path, c.Epoch, c.Step, c.GlobalStep)
	}
	for _, e := range f.Tensors {
		switch {
		case strings.HasPrefix(e.Name, modelPrefix):
			e.Name = strings.TrimPrefix(e.Name, modelPrefix)
			c.Model = append(c.Model, e)
		case strings.HasPrefix(e.Name, optimPrefix):
			e.Name = strings.TrimPrefix(e.Name, optimPrefix)
			c.Optimizer = append(c.Optimizer, e)
		default:
			return nil, fmt.Errorf("%s: checkpoint tensor %q is neither model/ nor optim/", path, e.Name)
		}
	}
	return &c, nil
}
