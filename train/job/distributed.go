package job

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"time"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/join"
	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ddp"
	"github.com/fathom-ml/fathom/internal/distenv"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/runlog/plot"
	"github.com/fathom-ml/fathom/tensor"
	"github.com/fathom-ml/fathom/train"
)

// distributed is a job running as one worker of several (`fathom run -n N
// -- fathom train CONFIG`, or torchrun, or a PyTorchJob): the workers
// train one model together, data parallel, and rank 0 writes the files.
// A nil *distributed is the single-process job.
type distributed struct {
	g        *comm.Group
	dp       *train.DataParallel
	ps       *psRole // strategy ps; nil otherwise
	pipeline bool    // strategy pipeline: rank s is stage s
	shard    bool    // data parallel with a sharded optimizer (ZeRO-1)
}

// sharded reports whether the job trains data parallel with a sharded
// optimizer (ZeRO-1).
func (d *distributed) sharded() bool { return d != nil && d.shard }

// joinDistributed joins the job's process group when the environment
// names more than one worker (WORLD_SIZE > 1); otherwise it returns nil.
// batch_size is the global batch, so it must divide among the workers.
func joinDistributed(ctx context.Context, c *Config) (*distributed, error) {
	e, err := distenv.FromOS()
	if err != nil {
		return nil, err
	}
	if e.WorldSize <= 1 {
		return nil, nil
	}
	if c.Distributed.Strategy == "ps" {
		return joinPS(ctx, c, e.WorldSize)
	}
	if c.Distributed.Strategy == "pipeline" {
		return joinPipeline(ctx, c, e.WorldSize)
	}
	if c.BatchSize%e.WorldSize != 0 {
		return nil, &ConfigError{File: c.file, Msg: fmt.Sprintf(
			"batch_size %d is the global batch of all %d workers and must be a multiple of their number (e.g. --set batch_size=%d)",
			c.BatchSize, e.WorldSize, max(c.BatchSize/e.WorldSize, 1)*e.WorldSize)}
	}
	g, err := joinGroup(ctx)
	if err != nil {
		return nil, err
	}
	o := c.Distributed.options()
	o.ShardOptimizer = c.useShardOptimizer(e.WorldSize, e.LocalWorldSize)
	return &distributed{g: g, dp: train.NewDataParallel(g, o), shard: o.ShardOptimizer}, nil
}

// joinGroup joins the job's process group through package comm/join (the
// group alone: training needs no store of its own); closing the group
// leaves the job.
func joinGroup(ctx context.Context) (*comm.Group, error) {
	j, err := join.FromEnv(ctx, join.Options{Group: true})
	if err != nil {
		return nil, err
	}
	if j.Group == nil {
		return nil, fmt.Errorf("rank %d: the environment names a single process", j.Rank())
	}
	return j.Group, nil
}

// strategy returns the trainer's Strategy: nil (Local) for one process.
func (d *distributed) strategy() train.Strategy {
	if d == nil {
		return nil
	}
	if d.ps != nil {
		return d.ps.strat
	}
	return d.dp
}

// evaluate scores net on l as modelfile.Evaluate does; in a distributed
// job each worker scores its shard and the sums are reduced.
func (d *distributed) evaluate(net nn.Layer, l *data.Loader, task metrics.Task, loss modelfile.LossFunc) (metrics.Metrics, error) {
	if d == nil || d.pipeline || (d.ps != nil && d.ps.async) { // a pipeline's rank 0 holds the gathered model; asynchronous workers do not wait for each other
		return modelfile.Evaluate(net, l, task, loss)
	}
	if err := modelfile.CheckTargets(l.Dataset(), task); err != nil {
		return metrics.Metrics{}, err
	}
	acc := metrics.Accumulator{Task: task}
	_, batches := d.dp.Batches(l, 0, 0)
	modelfile.EvalBatches(&acc, net, func(yield func(int, *data.Batch) bool) {
		for k, b := range batches {
			if b.Size > 0 && !yield(k, b) { // a shard's part of a short last batch may be empty
				return
			}
		}
	}, loss)
	if err := d.dp.ReduceMetrics(&acc); err != nil {
		return metrics.Metrics{}, err
	}
	return acc.Metrics(), nil
}

// main reports whether this process writes the files and the log: rank 0,
// or the only process.
func (d *distributed) main() bool { return d == nil || d.g.Rank() == 0 }

func (d *distributed) close() {
	if d != nil {
		d.ps.abort()
		d.g.Close()
	}
}

// WeightsSHA256 returns the hex SHA-256 of a model's state: every tensor of
// nn.StateEntries (parameters then buffers, in that one order), its
// elements in row-major order as little-endian bytes of its dtype (4 for
// float32). Equal fingerprints mean bit-identical weights, whatever
// produced them (one process or N, a resumed run or not).
func WeightsSHA256(m nn.Module) string {
	h := sha256.New()
	var buf []byte
	for _, e := range nn.StateEntries(m) {
		t := e.Tensor
		buf = buf[:0]
		switch t.DType() {
		case tensor.Float32:
			for _, v := range t.Float32s() {
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			}
		case tensor.Float64:
			for _, v := range t.Float64s() {
				buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
			}
		case tensor.Int64:
			for _, v := range t.Int64s() {
				buf = binary.LittleEndian.AppendUint64(buf, uint64(v))
			}
		case tensor.Int32:
			for _, v := range t.Int32s() {
				buf = binary.LittleEndian.AppendUint32(buf, uint32(v))
			}
		case tensor.Uint8, tensor.Bool:
			buf = append(buf, t.Uint8s()...)
		case tensor.Float16, tensor.BFloat16:
			for _, v := range t.Uint16s() {
				buf = binary.LittleEndian.AppendUint16(buf, v)
			}
		}
		h.Write(buf)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// sameFile checks that every worker sees the same content at path (or that
// none sees a file there): a resumed data-parallel run needs one
// checkpoint, on a volume all workers share. One process: nothing to check.
func (d *distributed) sameFile(path string) error {
	if d == nil {
		return nil
	}
	var digest int64 // 0: no file
	if b, err := os.ReadFile(path); err == nil {
		sum := sha256.Sum256(b)
		digest = int64(binary.LittleEndian.Uint64(sum[:8]) | 1)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	lo, hi := []int64{digest}, []int64{digest}
	g := d.g
	if d.isPSWorker() {
		g = d.ps.workers // the parameter servers read no checkpoint
	}
	if err := comm.AllReduce(g, lo, comm.Min); err != nil {
		return fmt.Errorf("comparing the workers' checkpoints at %s: %w", path, err)
	}
	if err := comm.AllReduce(g, hi, comm.Max); err != nil {
		return fmt.Errorf("comparing the workers' checkpoints at %s: %w", path, err)
	}
	if lo[0] != hi[0] {
		mine := "none"
		if digest != 0 {
			mine = fmt.Sprintf("one with content hash %016x", uint64(digest))
		}
		return fmt.Errorf("rank %d: the workers do not all see the same checkpoint at %s (this rank sees %s): "+
			"the workers of a resumed run need one checkpoint, so put output.dir on a volume they all share", d.g.Rank(), path, mine)
	}
	return nil
}

// reportOverlap sets the result's all-reduce time and hidden fraction from
// the DDP's traced steps and draws the last few of them into timeline
// (when set). One process, or deterministic training (no DDP): nothing.
func (d *distributed) reportOverlap(res *Result, timeline string) error {
	if d == nil || d.dp == nil || d.dp.DDP() == nil {
		return nil
	}
	steps := d.dp.DDP().Traces()
	if len(steps) == 0 {
		return nil
	}
	comm, hidden := ddp.Overlap(steps)
	res.AllreduceSeconds = comm.Seconds()
	if comm > 0 {
		res.AllreduceHidden = float64(hidden) / float64(comm)
	}
	if timeline == "" {
		return nil
	}
	last := steps[max(0, len(steps)-3):]
	t0 := last[0].Begin
	ms := func(t time.Time) float64 { return float64(t.Sub(t0)) / 1e6 }
	rows := []plot.TimelineRow{{Label: "backward"}}
	for _, st := range last {
		rows[0].Spans = append(rows[0].Spans, [2]float64{ms(st.Begin), ms(st.BackwardEnd)})
		for i, b := range st.Buckets {
			if len(rows) <= i+1 {
				rows = append(rows, plot.TimelineRow{Label: fmt.Sprintf("bucket %d (%.0f KiB)", i, float64(b.Bytes)/1024), Comm: true})
			}
			if !b.Start.IsZero() {
				rows[i+1].Spans = append(rows[i+1].Spans, [2]float64{ms(b.Start), ms(b.End)})
			}
		}
	}
	title := fmt.Sprintf("rank 0 of %d, last %d steps: all-reduce %.0f%% hidden behind backward", d.g.Size(), len(last), 100*res.AllreduceHidden)
	if err := plot.Timeline(timeline, title, rows); err != nil {
		return fmt.Errorf("distributed.timeline: %w", err)
	}
	res.TimelinePath = timeline
	return nil
}
