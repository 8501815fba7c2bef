package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/internal/atomicfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/pipe"
	"github.com/fathom-ml/fathom/tensor"
	"github.com/fathom-ml/fathom/train"
	"gopkg.in/yaml.v3"
)

// Pipeline jobs (distributed.strategy: pipeline). Under `fathom run -n K`
// rank s runs stage s of K; under `fathom run -n K·D` ranks d·K .. d·K+K−1
// are replica d of the pipeline (K stages × D data-parallel replicas):
// replica d takes the d-th of D parts of every global batch, and after the
// batch's passes each stage sums its gradients, weighted by the replica's
// share, with the same stage of the other replicas (an all-reduce). Stage
// s of replica d is stage s of the model: the model's layer list cut at
// distributed.split (the indices of the layers that begin stages 1..K−1)
// or, without it, where rank 0's timing of every layer's forward and
// backward pass on the first batch balances the stages (pipe.Balance).
// Each replica's part of every batch (batch_size rows is the global
// batch) is cut into distributed.micro_batches micro-batches run in
// distributed.schedule (gpipe or 1f1b; micro_batches 1 is naive model
// parallelism); each stage steps the configured optimizer on its own
// parameters once per batch. Every rank reads the data and builds the
// whole model from the seed (so the initial weights are one process's)
// and keeps its stage's layers; the last stage computes the loss and the
// metrics and sends their sums to the others after every epoch; at the
// end the stages send their parameters to rank 0, which scores the test
// split and writes the files as a single process would. The epochs run in
// train.Trainer with train.Pipeline as the strategy, so early stopping and
// checkpoints (a part per stage, train.ShardedCheckpoints) work as for the
// other strategies; with checkpoints rank 0 records the stage cuts beside
// them (checkpoint.pipeline.json) for a resumed run.
//
// distributed.memory_limit_mb bounds the training state a rank may hold:
// its parameters, their gradients and the optimizer's state (2 values per
// parameter for Adam and AdamW, 1 for SGD with momentum, RMSprop and
// Adagrad), plus, for a pipeline stage, the peak activations measured in
// the first step. A model over the limit stops with an error saying how
// much it needs, so that it can be cut into more stages.

// validatePipeline checks the pipeline keys; the strategy switch of
// validateStrategy calls it.
func (c *Config) validatePipeline(root *yaml.Node) *ConfigError {
	d := &c.Distributed
	line := func(key string) int { return valueLine(root, "distributed", key) }
	if d.Strategy != "pipeline" {
		for key, set := range map[string]bool{"stages": d.Stages != 0, "micro_batches": d.MicroBatches != 0, "schedule": d.Schedule != "", "split": d.Split != nil} {
			if set {
				return &ConfigError{Line: line(key), Msg: fmt.Sprintf("distributed.%s applies only with distributed.strategy: pipeline", key)}
			}
		}
		return nil
	}
	if _, err := pipe.ParseSchedule(d.Schedule); err != nil {
		return &ConfigError{Line: line("schedule"), Msg: fmt.Sprintf("distributed.schedule: want gpipe or 1f1b, got %q", d.Schedule)}
	}
	switch {
	case d.Stages < 0 || d.Stages == 1:
		return &ConfigError{Line: line("stages"), Msg: fmt.Sprintf("distributed.stages: want 2 or more (one rank each), got %d", d.Stages)}
	case d.MicroBatches < 0:
		return &ConfigError{Line: line("micro_batches"), Msg: fmt.Sprintf("distributed.micro_batches: want 1 or more, got %d", d.MicroBatches)}
	case d.Stages > 0 && d.Split != nil && len(d.Split) != d.Stages-1:
		return &ConfigError{Line: line("split"), Msg: fmt.Sprintf("distributed.split: %d stages need %d split points, got %d", d.Stages, d.Stages-1, len(d.Split))}
	case d.Split != nil && !slices.IsSorted(d.Split):
		return &ConfigError{Line: line("split"), Msg: "distributed.split: want ascending layer indices"}
	case d.Deterministic || d.shardAsked() || d.SyncBatchNorm || d.compresses():
		return &ConfigError{Line: line("strategy"), Msg: "distributed.strategy pipeline does not go together with deterministic, shard_optimizer, sync_batchnorm or compression (data-parallel options)"}
	case c.Optimizer.ClipGradNorm > 0:
		return &ConfigError{Line: line("strategy"), Msg: "distributed.strategy pipeline: clip_grad_norm is not supported (the norm spans the stages)"}
	}
	return nil
}

func joinPipeline(ctx context.Context, c *Config, world int) (*distributed, error) {
	k := c.Distributed.Stages
	if k == 0 {
		k = world
	}
	if world%k != 0 {
		return nil, &ConfigError{File: c.file, Msg: fmt.Sprintf("distributed.stages is %d but the job has %d ranks, not a multiple: run it with fathom run -n %d (or a multiple, for data-parallel replicas of the pipeline)", k, world, k)}
	}
	if d := world / k; c.BatchSize%d != 0 {
		return nil, &ConfigError{File: c.file, Msg: fmt.Sprintf("batch_size %d is the global batch of %d pipeline replicas and must be a multiple of their number", c.BatchSize, d)}
	}
	g, err := joinGroup(ctx)
	if err != nil {
		return nil, err
	}
	return &distributed{g: g, pipeline: true}, nil
}

func (d *distributed) isPipeline() bool { return d != nil && d.pipeline }

// stateFactor is how many float32 values per parameter training holds
// beyond the parameter itself: its gradient and the optimizer's state.
func (c *Config) stateFactor() int {
	kind, _ := c.optimizerKind()
	switch kind {
	case "adam", "adamw":
		return 3
	case "sgd":
		if c.Optimizer.Momentum != 0 {
			return 2
		}
		return 1
	}
	return 2
}

// trainingBytes returns the parameters' training state of params.
func (c *Config) trainingBytes(params []*tensor.Tensor) int64 {
	n := int64(0)
	for _, p := range params {
		n += int64(p.Numel())
	}
	return n * 4 * int64(1+c.stateFactor())
}

// checkMemory refuses a rank whose training state (plus activations)
// exceeds distributed.memory_limit_mb; what names the rank's part.
func (c *Config) checkMemory(what string, params []*tensor.Tensor, activations int64) error {
	limit := c.Distributed.MemoryLimitMB
	if limit <= 0 {
		return nil
	}
	need := c.trainingBytes(params) + activations
	if float64(need) <= limit*(1<<20) {
		return nil
	}
	return fmt.Errorf("%s needs %.1f MiB to train (parameters, gradients and optimizer state %.1f MiB, activations %.1f MiB), over distributed.memory_limit_mb %g: "+
		"cut the model into pipeline stages (distributed.strategy: pipeline under fathom run -n K)",
		what, float64(need)/(1<<20), float64(c.trainingBytes(params))/(1<<20), float64(activations)/(1<<20), limit)
}

// pipelineCuts returns the stage boundaries: the configured split, or
// rank 0's balance of the layers' measured forward and backward times on
// batch b, sent to every stage. The timed balance can differ between
// runs, so with checkpoints (ckpt set) rank 0 records the cuts beside them
// (checkpoint.pipeline.json) and a resumed run uses the recorded ones.
func (c *Config) pipelineCuts(g *comm.Group, layers []nn.Layer, b *data.Batch, ckpt string, resuming bool) ([]int, error) {
	K := g.Size()
	if c.Distributed.Split != nil {
		return pipe.CutsAt(len(layers), c.Distributed.Split)
	}
	if len(layers) < K {
		return nil, fmt.Errorf("distributed.stages: %d stages for a model of %d layers", K, len(layers))
	}
	cut := make([]int64, K+1)
	if g.Rank() == 0 {
		cs, err := recordedCuts(ckpt, resuming, len(layers), K)
		if err == nil && cs == nil {
			cs, err = pipe.Balance(layerCosts(layers, b.X), K)
		}
		if err == nil && ckpt != "" {
			err = recordCuts(ckpt, cs)
		}
		if err != nil {
			return nil, err
		}
		for i, v := range cs {
			cut[i] = int64(v)
		}
	}
	if err := comm.Broadcast(g, cut, 0); err != nil {
		return nil, fmt.Errorf("pipeline: sending the stage cuts: %w", err)
	}
	out := make([]int, K+1)
	for i, v := range cut {
		out[i] = int(v)
	}
	return out, nil
}

// cutsPath is where the stage cuts of the checkpoints at ckpt are kept.
func cutsPath(ckpt string) string {
	return strings.TrimSuffix(ckpt, filepath.Ext(ckpt)) + ".pipeline.json"
}

// recordedCuts returns the cuts recorded beside the checkpoints at ckpt
// when resuming (nil when there are none) for a model of layers layers in
// k stages.
func recordedCuts(ckpt string, resuming bool, layers, k int) ([]int, error) {
	if ckpt == "" || !resuming {
		return nil, nil
	}
	b, err := os.ReadFile(cutsPath(ckpt))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var rec struct {
		Cuts []int `json:"cuts"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w", cutsPath(ckpt), err)
	}
	if len(rec.Cuts) != k+1 || rec.Cuts[0] != 0 || rec.Cuts[k] != layers || !slices.IsSorted(rec.Cuts) {
		return nil, fmt.Errorf("%s: stage cuts %v do not fit %d stages of %d layers", cutsPath(ckpt), rec.Cuts, k, layers)
	}
	return rec.Cuts, nil
}

// recordCuts writes the stage cuts beside the checkpoints at ckpt.
func recordCuts(ckpt string, cuts []int) error {
	b, err := json.Marshal(map[string][]int{"cuts": cuts})
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(cutsPath(ckpt), append(b, '\n'))
}

// layerCosts times every layer's forward and backward pass on x (the
// best of three runs, in seconds).
func layerCosts(layers []nn.Layer, x *tensor.Tensor) []float64 {
	costs := make([]float64, len(layers))
	for i := range costs {
		costs[i] = 1e9
	}
	for range 3 {
		in := x
		for i, l := range layers {
			in = in.Detach()
			in.SetRequiresGrad(true)
			t0 := time.Now()
			out := l.Forward(in)
			out.BackwardWith(tensor.OnesLike(out))
			costs[i] = min(costs[i], time.Since(t0).Seconds())
			in = out.Detach()
		}
		for _, l := range layers {
			for _, p := range l.Parameters() {
				p.SetGrad(nil)
			}
		}
	}
	return costs
}

// pipelineRun is this rank's part of a pipeline job: its stage as the
// Trainer's strategy, its replica's pipeline group and the stage cuts.
type pipelineRun struct {
	pl  *train.Pipeline
	pg  *comm.Group
	cut []int
}

// pipelineOptions makes this rank's stage of the pipeline and sets it as
// the strategy of opts (train.Pipeline), with the configured optimizer and
// schedule over the stage's parameters only. The Trainer runs the epochs;
// end then gathers the stages on rank 0.
func (c *Config) pipelineOptions(d *distributed, net *nn.Sequential, opts *train.Options, resuming bool, logf func(string, ...any)) (*pipelineRun, error) {
	g := d.g
	K := c.Distributed.Stages
	if K == 0 {
		K = g.Size()
	}
	D := g.Size() / K
	replica, s := g.Rank()/K, g.Rank()%K
	layers := net.Layers()
	first, ok := firstBatch(opts.Train)
	if !ok {
		return nil, fmt.Errorf("pipeline: no training data")
	}
	cut, err := c.pipelineCuts(g, layers, first, opts.CheckpointPath, resuming)
	if err != nil {
		return nil, &ConfigError{File: c.file, Msg: err.Error()}
	}
	sched, _ := pipe.ParseSchedule(c.Distributed.Schedule)
	M := max(c.Distributed.MicroBatches, 1)
	// The replica's stages, and the same stage of every replica.
	pipeRanks, dpRanks := make([]int, K), make([]int, D)
	for i := range pipeRanks {
		pipeRanks[i] = replica*K + i
	}
	for i := range dpRanks {
		dpRanks[i] = i*K + s
	}
	r := &pipelineRun{pl: &train.Pipeline{Group: g, Replica: replica, Replicas: D}, cut: cut}
	if r.pg, err = g.Subgroup(pipeRanks); err != nil {
		return nil, err
	}
	if D > 1 {
		if r.pl.ReplicaGroup, err = g.Subgroup(dpRanks); err != nil {
			return nil, err
		}
	}
	if r.pl.Stage, err = pipe.NewStage(r.pg, layers[cut[s]:cut[s+1]], sched, M); err != nil {
		return nil, err
	}
	params := r.pl.Stage.Parameters()
	what := fmt.Sprintf("pipeline stage %d of %d (layers %d-%d)", s, K, cut[s], cut[s+1]-1)
	if err := c.checkMemory(what, params, 0); err != nil {
		return nil, err
	}
	r.pl.FirstStep = func(st pipe.Stats) error { return c.checkMemory(what, params, st.PeakActivationBytes) }
	logf("pipeline: %d stages at layers %v × %d replicas, %d micro-batches, %v schedule", K, cut, D, M, sched)
	if opts.Optimizer, err = c.newOptimizer(params); err != nil {
		return nil, err
	}
	if opts.Schedule, err = c.newSchedule(opts.Optimizer); err != nil {
		return nil, err
	}
	opts.Strategy = r.pl
	return r, nil
}

// end reports the stage's last step and sends every stage's trained
// parameters to rank 0's copy of the model.
func (r *pipelineRun) end(net *nn.Sequential, logf func(string, ...any)) error {
	st := r.pl.Stage
	stats := st.Stats()
	logf("pipeline: stage %d, last step: bubble %.0f%% (ideal %.0f%%), peak activations %.1f KiB",
		st.Index(), 100*stats.Bubble(), 100*pipe.IdealBubble(st.Stages(), stats.Micro), float64(stats.PeakActivationBytes)/1024)
	if r.pl.Replica != 0 {
		return nil
	}
	return gatherStages(r.pg, net.Layers(), r.cut)
}

// gatherStages sends every stage's parameters to rank 0's copy of the
// model.
func gatherStages(g *comm.Group, layers []nn.Layer, cut []int) error {
	for s := 1; s < g.Size(); s++ {
		if g.Rank() != 0 && g.Rank() != s {
			continue
		}
		i := 0
		for _, l := range layers[cut[s]:cut[s+1]] {
			for _, p := range l.Parameters() {
				var err error
				if g.Rank() == s {
					err = comm.Send(g, p.Float32s(), 0, i)
				} else {
					err = comm.Recv(g, p.Float32s(), s, i)
				}
				if err != nil {
					return fmt.Errorf("pipeline: gathering stage %d's parameters on rank 0: %w", s, err)
				}
				i++
			}
		}
	}
	return nil
}

// firstBatch returns the first training batch (for timing the layers).
func firstBatch(l *data.Loader) (*data.Batch, bool) {
	for _, b := range l.Epoch(0) {
		return b, true
	}
	return nil, false
}
