package job

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/pipe"
	"github.com/fathom-ml/fathom/runlog"
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
// split and writes the files as a single process would.
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
	case c.Output.Resume || c.Output.CheckpointEvery > 0:
		return &ConfigError{Line: line("strategy"), Msg: "distributed.strategy pipeline: checkpoints are not supported yet (each stage holds part of the state)"}
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
// batch b, sent to every stage.
func (c *Config) pipelineCuts(g *comm.Group, layers []nn.Layer, b *data.Batch) ([]int, error) {
	K := g.Size()
	if c.Distributed.Split != nil {
		return pipe.CutsAt(len(layers), c.Distributed.Split)
	}
	if len(layers) < K {
		return nil, fmt.Errorf("distributed.stages: %d stages for a model of %d layers", K, len(layers))
	}
	cut := make([]int64, K+1)
	if g.Rank() == 0 {
		costs := layerCosts(layers, b.X)
		cs, err := pipe.Balance(costs, K)
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

// fitPipeline trains net as stages of a pipeline, this rank's stage only,
// and leaves the trained parameters of every stage in rank 0's net.
func (c *Config) fitPipeline(ctx context.Context, d *distributed, net *nn.Sequential, task metrics.Task, trainL, evalL *data.Loader,
	hooks train.Hooks, logf func(string, ...any)) ([]runlog.Epoch, error) {
	g := d.g
	K := c.Distributed.Stages
	if K == 0 {
		K = g.Size()
	}
	D := g.Size() / K
	replica, s := g.Rank()/K, g.Rank()%K
	layers := net.Layers()
	first, ok := firstBatch(trainL)
	if !ok {
		return nil, fmt.Errorf("pipeline: no training data")
	}
	cut, err := c.pipelineCuts(g, layers, first)
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
	pg, err := g.Subgroup(pipeRanks)
	if err != nil {
		return nil, err
	}
	var dp *comm.Group
	if D > 1 {
		if dp, err = g.Subgroup(dpRanks); err != nil {
			return nil, err
		}
	}
	st, err := pipe.NewStage(pg, layers[cut[s]:cut[s+1]], sched, M)
	if err != nil {
		return nil, err
	}
	params := st.Parameters()
	what := fmt.Sprintf("pipeline stage %d of %d (layers %d-%d)", s, K, cut[s], cut[s+1]-1)
	if err := c.checkMemory(what, params, 0); err != nil {
		return nil, err
	}
	logf("pipeline: %d stages at layers %v × %d replicas, %d micro-batches, %v schedule", K, cut, D, M, sched)
	var flat []float32 // the stage's gradients, for the replicas' all-reduce
	if D > 1 {
		n := 0
		for _, p := range params {
			n += p.Numel()
		}
		flat = make([]float32, n)
	}
	var opt interface {
		ZeroGrad()
		Step() error
		LR(int) float64
	}
	var seek func(int)
	if len(params) > 0 {
		o, err := c.newOptimizer(params)
		if err != nil {
			return nil, err
		}
		sch, err := c.newSchedule(o)
		if err != nil {
			return nil, err
		}
		if sch != nil {
			seek = sch.Seek
		}
		opt = o
	}
	lossFn := c.lossFunc()
	var hist []runlog.Epoch
	steps := 0
	for epoch := range c.Epochs {
		if err := ctx.Err(); err != nil {
			return hist, err
		}
		if seek != nil {
			seek(epoch)
		}
		net.SetTraining(true)
		var tr metrics.Accumulator
		tr.Task = task
		start := time.Now()
		for k, b := range trainL.Epoch(epoch) {
			if opt != nil {
				opt.ZeroGrad()
			}
			part := train.SubBatch(b, b.Size*replica/D, b.Size*(replica+1)/D)
			loss := func(out *tensor.Tensor, lo, hi int) *tensor.Tensor {
				sub := train.SubBatch(part, lo, hi)
				l := lossFn(out, sub)
				modelfile.AddBatch(&tr, l.Item(), out, sub)
				return l
			}
			if part.Size > 0 {
				if _, err := st.Step(part.X, part.Size, loss); err != nil {
					return hist, fmt.Errorf("epoch %d, batch %d: %w", epoch+1, k+1, err)
				}
			}
			if D > 1 {
				if err := sumReplicas(dp, params, flat, float32(part.Size)/float32(b.Size)); err != nil {
					return hist, fmt.Errorf("epoch %d, batch %d: %w", epoch+1, k+1, err)
				}
			}
			if steps == 0 {
				if err := c.checkMemory(what, params, st.Stats().PeakActivationBytes); err != nil {
					return hist, err
				}
			}
			if opt != nil {
				if err := opt.Step(); err != nil {
					return hist, err
				}
			}
			steps++
		}
		secs := time.Since(start).Seconds()
		net.SetTraining(false)
		ev := metrics.Accumulator{Task: task}
		es := time.Now()
		if evalL != nil && replica == 0 { // replica 0 scores the evaluation data
			for _, b := range evalL.Epoch(0) {
				sink := func(out *tensor.Tensor, lo, hi int) {
					sub := train.SubBatch(b, lo, hi)
					modelfile.AddBatch(&ev, lossFn(out, sub).Item(), out, sub)
				}
				if err := st.Forward(b.X, b.Size, sink); err != nil {
					return hist, fmt.Errorf("evaluating after epoch %d: %w", epoch+1, err)
				}
			}
		}
		// Only last stages hold sums (the others' are zero): the training
		// sums of every replica, the evaluation sums of replica 0.
		sums := []float64{tr.LossSum, tr.SqErr, float64(tr.Correct), float64(tr.N), ev.LossSum, ev.SqErr, float64(ev.Correct), float64(ev.N)}
		if err := comm.AllReduce(g, sums, comm.Sum); err != nil {
			return hist, fmt.Errorf("pipeline: epoch %d's metrics: %w", epoch+1, err)
		}
		tr = metrics.Accumulator{Task: task, LossSum: sums[0], SqErr: sums[1], Correct: int(sums[2]), N: int(sums[3])}
		ev = metrics.Accumulator{Task: task, LossSum: sums[4], SqErr: sums[5], Correct: int(sums[6]), N: int(sums[7])}
		r := runlog.Epoch{Epoch: epoch + 1, Train: tr.Metrics(), Seconds: secs, EvalSeconds: time.Since(es).Seconds(), Steps: steps}
		if opt != nil {
			r.LR = opt.LR(0)
		}
		if evalL != nil {
			m := ev.Metrics()
			r.Eval = &m
		}
		hist = append(hist, r)
		if d.main() && hooks.EpochEnd != nil {
			if err := hooks.EpochEnd(r); err != nil {
				return hist, err
			}
		}
	}
	stats := st.Stats()
	logf("pipeline: stage %d, last step: bubble %.0f%% (ideal %.0f%%), peak activations %.1f KiB",
		s, 100*stats.Bubble(), 100*pipe.IdealBubble(K, stats.Micro), float64(stats.PeakActivationBytes)/1024)
	if replica != 0 {
		return hist, nil
	}
	return hist, gatherStages(pg, layers, cut)
}

// sumReplicas weights the stage's gradients by the replica's share of the
// batch and sums them over the replicas (dp: the same stage of each).
func sumReplicas(dp *comm.Group, params []*tensor.Tensor, flat []float32, share float32) error {
	off := 0
	for _, p := range params {
		n := p.Numel()
		if g := p.Grad(); g != nil {
			kernel.MulScalarF32(flat[off:off+n], g.Float32s(), share)
		} else {
			clear(flat[off : off+n])
		}
		off += n
	}
	if err := comm.AllReduce(dp, flat, comm.Sum); err != nil {
		return fmt.Errorf("pipeline: summing the replicas' gradients: %w", err)
	}
	off = 0
	for _, p := range params {
		n := p.Numel()
		if p.Grad() == nil {
			p.SetGrad(tensor.Zeros(tensor.Float32, p.Shape()...))
		}
		copy(p.Grad().Float32s(), flat[off:off+n])
		off += n
	}
	return nil
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
