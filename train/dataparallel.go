package train

import (
	"errors"
	"fmt"
	"iter"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/tensorcomm"
	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ddp"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/tensor"
)

// DataParallel is the Strategy of data-parallel training (package ddp) over
// the ranks of a comm.Group: every rank trains a replica of the model on
// its part of every global batch, and the gradients are reduced in buckets
// that overlap the backward pass.
//
// A loader's BatchSize is the GLOBAL batch: rank r of N takes the r-th of N
// contiguous parts of every batch of the loader's own order
// (data.DistributedBatchSampler with the loader's Shuffle and Seed), and
// its gradient is weighted by its part's share of the global batch. So the
// step of N ranks equals the step of one process with that batch, up to
// float32 rounding, whatever N. The training loader's BatchSize must be a
// multiple of N; for others (evaluation) it is rounded up to one, which
// changes nothing but the cut.
//
// Rank 0 is the main process (files, hooks). ReduceMetrics sums the
// metric accumulators of all ranks.
type DataParallel struct {
	g      *comm.Group
	opts   ddp.Options
	d      *ddp.DDP
	shards map[*data.Loader]*shard
	err    error // a loader that could not be sharded; returned by the next reduction
	global int   // the size of the global batch Batches yielded last
}

// shard is one loader cut for this rank.
type shard struct {
	l      *data.Loader
	rows   int // rows of the global epoch
	global int // global batch size
	drop   bool
}

// NewDataParallel returns the data-parallel strategy of this process's
// rank of g with ddp's options (bucket sizes, unused parameters).
func NewDataParallel(g *comm.Group, opts ddp.Options) *DataParallel {
	return &DataParallel{g: g, opts: opts, shards: map[*data.Loader]*shard{}}
}

// DDP returns the gradient synchronizer Setup built (nil before Setup).
func (s *DataParallel) DDP() *ddp.DDP { return s.d }

// Setup broadcasts rank 0's parameters and buffers and lays out the
// gradient buckets (ddp.New).
//
// With ddp.Options.ShardOptimizer (ZeRO-1) the trainer's optimizer must be
// a *ddp.ShardedOptimizer; Setup binds it to the buckets.
func (s *DataParallel) Setup(model nn.Layer, opt optim.Optimizer) error {
	if s.d != nil {
		return nil
	}
	sharded, isSharded := opt.(*ddp.ShardedOptimizer)
	if s.opts.ShardOptimizer != isSharded {
		return fmt.Errorf("data parallel: ShardOptimizer needs a *ddp.ShardedOptimizer as the trainer's optimizer, and only then (got %T)", opt)
	}
	d, err := ddp.New(model, s.g, s.opts)
	if err != nil {
		return err
	}
	if isSharded {
		if err := d.BindSharded(sharded); err != nil {
			return err
		}
	}
	s.d = d
	return nil
}

// Batches returns this rank's part of every global batch of l's epoch
// from batch start on; every rank gets the same number of batches, and
// the last ones may be short or empty. As it yields a training batch it
// sets this rank's gradient weight to the batch's share of the global
// batch.
func (s *DataParallel) Batches(l *data.Loader, epoch, start int) (int, iter.Seq2[int, *data.Batch]) {
	sh, err := s.shard(l)
	if err != nil {
		s.err = errors.Join(s.err, err)
		return 0, func(func(int, *data.Batch) bool) {}
	}
	return sh.l.Len(), func(yield func(int, *data.Batch) bool) {
		for k, b := range sh.l.EpochFrom(epoch, start) {
			s.global = sh.globalSize(k)
			if s.d != nil {
				s.d.SetScale(float64(b.Size) / float64(s.global))
			}
			if !yield(k, b) {
				return
			}
		}
	}
}

// globalSize returns the number of rows of global batch k.
func (sh *shard) globalSize(k int) int {
	if sh.drop {
		return sh.global
	}
	return max(min(sh.global, sh.rows-k*sh.global), 1)
}

// shard returns this rank's loader over l's data, made on first use.
func (s *DataParallel) shard(l *data.Loader) (*shard, error) {
	if sh := s.shards[l]; sh != nil {
		return sh, nil
	}
	o := l.Options()
	if o.Sampler != nil {
		return nil, fmt.Errorf("data parallel: a loader with its own Sampler cannot be sharded; give it BatchSize, Shuffle and Seed")
	}
	n := s.g.Size()
	global := (o.BatchSize + n - 1) / n * n
	ds := l.Dataset()
	if tail := ds.Len() % global; s.opts.SyncBatchNorm && !o.DropLast && tail > 0 && tail < n {
		// A rank with no rows would miss the statistics sums the others
		// wait for.
		return nil, fmt.Errorf("data parallel: SyncBatchNorm needs rows on every worker in every step, but the last global batch has %d rows for %d workers: drop it (LoaderOptions.DropLast) or change the batch size so that the training rows modulo it are 0 or at least the number of workers", tail, n)
	}
	sampler, err := data.NewDistributedBatchSampler(ds.Len(), global, data.DistributedOptions{
		Rank: s.g.Rank(), Ranks: n, Shuffle: o.Shuffle, Seed: o.Seed, DropLast: o.DropLast})
	if err != nil {
		return nil, fmt.Errorf("data parallel: %w", err)
	}
	sl, err := data.NewLoader(ds, data.LoaderOptions{Sampler: sampler, Prefetch: o.Prefetch})
	if err != nil {
		return nil, fmt.Errorf("data parallel: %w", err)
	}
	sh := &shard{l: sl, rows: ds.Len(), global: global, drop: o.DropLast}
	s.shards[l] = sh
	return sh, nil
}

// BeforeBackward checks which parameters the loss reaches (ddp.Prepare):
// one it does not reach is an *ddp.UnusedParameterError naming it, found
// before Backward and any gradient all-reduce, or with
// FindUnusedParameters it is marked ready at once so its bucket need not
// wait for Sync. On that error this rank still takes part in the step's
// reduction (with zero gradients, as ddp.Sync does on its own error), so
// that a rank whose loss reached every parameter (data-dependent use) is
// not left waiting in it.
func (s *DataParallel) BeforeBackward(loss *tensor.Tensor) error {
	if s.d == nil {
		return errors.New("data parallel: BeforeBackward before Setup")
	}
	err := s.d.Prepare(loss)
	if err == nil {
		return nil
	}
	var ue *ddp.UnusedParameterError
	if serr := s.d.Sync(); serr != nil && !errors.As(serr, &ue) {
		err = errors.Join(err, serr)
	}
	return err
}

// AfterBackward waits for every gradient bucket's all-reduce (ddp.Sync):
// the gradients of params then hold the global batch's gradient.
func (s *DataParallel) AfterBackward([]*tensor.Tensor) error {
	if s.d == nil {
		return errors.New("data parallel: AfterBackward before Setup")
	}
	return s.d.Sync()
}

// ReduceMetrics sums the accumulators of all ranks in place.
func (s *DataParallel) ReduceMetrics(sums *metrics.Accumulator) error {
	if s.err != nil {
		return s.err
	}
	// Counts below 2^53 are exact in float64.
	v := []float64{sums.LossSum, sums.SqErr, float64(sums.Correct), float64(sums.N)}
	if err := comm.AllReduce(s.g, v, comm.Sum); err != nil {
		return fmt.Errorf("data parallel: reducing metrics: %w", err)
	}
	sums.LossSum, sums.SqErr, sums.Correct, sums.N = v[0], v[1], int(v[2]), int(v[3])
	return nil
}

// IsMain reports whether this is rank 0.
func (s *DataParallel) IsMain() bool { return s.g.Rank() == 0 }

// setupFixed copies rank 0's parameters, buffers and dropout seeds to
// every rank, for deterministic training (no gradient hooks: the trainer
// sums the gradients itself, with sumFixed).
func (s *DataParallel) setupFixed(model nn.Layer, seeds []int64) error {
	if err := comm.Broadcast(s.g, seeds, 0); err != nil {
		return fmt.Errorf("data parallel: broadcasting the dropout seeds: %w", err)
	}
	for _, p := range model.Parameters() {
		if err := tensorcomm.BroadcastTensor(s.g, p, 0); err != nil {
			return fmt.Errorf("data parallel: broadcasting the parameters: %w", err)
		}
	}
	return s.syncBuffers(model)
}

// position returns the global batch size of the batch Batches yielded
// last, this rank and the number of ranks.
func (s *DataParallel) position() (global, rank, ranks int) {
	return s.global, s.g.Rank(), s.g.Size()
}

// sumFixed sums x over the ranks by recursive doubling: partners at
// distance 1, 2, 4, ..., the same pairs in the same order as the
// trainer's local tree.
func (s *DataParallel) sumFixed(x []float32) error {
	if err := comm.AllReduceWith(s.g, x, comm.Sum, comm.AlgoRecursiveDoubling); err != nil {
		return fmt.Errorf("data parallel: gradient all-reduce: %w", err)
	}
	return nil
}

// syncBuffers copies rank 0's buffers to every rank.
func (s *DataParallel) syncBuffers(model nn.Layer) error {
	for _, b := range model.NamedBuffers() {
		if err := tensorcomm.BroadcastTensor(s.g, b.Tensor, 0); err != nil {
			return fmt.Errorf("data parallel: broadcasting buffer %s: %w", b.Name, err)
		}
	}
	return nil
}
