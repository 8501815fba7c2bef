package train

import (
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// Deterministic training (Options.MicroShards = S) gives bitwise the same
// weights on 1, 2, 4, ... processes. Every global batch of m rows is cut
// into S micro-shards, shard s holding rows ⌊m·s/S⌋ to ⌊m·(s+1)/S⌋ of the
// batch's global order, whatever the number of processes; rank r of N
// holds shards r·S/N to (r+1)·S/N − 1, which are exactly its rows
// (data.DistributedBatchSampler cuts a batch at ⌊m·r/N⌋). Each shard runs
// forward and backward on its own, and its gradient, weighted by its share
// of the batch (rows/m), is kept apart. The S weighted gradients are then
// summed in one fixed binary tree: adjacent shards first, locally, then
// across ranks by recursive doubling (partners at distance 1, 2, 4, ...),
// which adds the same pairs in the same order. Float addition is
// commutative, so both partners of a pair get the same bits, and every
// shard's gradient is computed from the same rows by the same kernels
// (whose results do not depend on the thread count): the sum, and so the
// step, is the same bits for every N that divides S.
//
// What else could differ is fixed too: dropout masks are drawn from a
// stream reseeded for every (step, shard, layer), and buffers (BatchNorm's
// running statistics) keep the values shard 0's forward left, copied from
// rank 0 to every rank after each step.
//
// The price: S forward/backward passes of m/S rows instead of N of m/N,
// and a gradient all-reduce after backward instead of overlapped with it.

// fixedOrder is what a Strategy provides to deterministic training.
type fixedOrder interface {
	// setupFixed replaces Setup: rank 0's parameters, buffers and the
	// dropout seeds are copied to every rank; no gradient hooks.
	setupFixed(model nn.Layer, seeds []int64) error
	// position returns, for the batch Batches yielded last, the size of
	// its global batch, this process's rank and the number of ranks.
	position() (global, rank, ranks int)
	// sumFixed sums x over the ranks by recursive doubling, in place.
	sumFixed(x []float32) error
	// syncBuffers copies rank 0's buffers of model to every rank.
	syncBuffers(model nn.Layer) error
}

// fixedState is the deterministic step's memory, kept across steps.
type fixedState struct {
	shards  [][]float32 // one weighted gradient per local micro-shard
	dropout []*nn.Dropout
	seeds   []uint64 // each dropout layer's base seed
	saved   []*tensor.Tensor
}

// checkMicroShards validates Options.MicroShards against the number of
// ranks.
func checkMicroShards(s, ranks int) error {
	switch {
	case s <= 0 || s&(s-1) != 0:
		return fmt.Errorf("train: deterministic training: micro-shards must be a power of two, got %d", s)
	case ranks&(ranks-1) != 0:
		return fmt.Errorf("train: deterministic training needs a power-of-two number of processes (1, 2, 4, ...), got %d", ranks)
	case s%ranks != 0:
		return fmt.Errorf("train: deterministic training: %d micro-shards cannot be spread over %d processes (set micro-shards to a multiple of the processes)", s, ranks)
	}
	return nil
}

// setupFixed prepares deterministic training: the strategy's start
// broadcast and the dropout layers' seeds.
func (t *Trainer) setupFixed() error {
	o := &t.opts
	fo, dist := o.Strategy.(fixedOrder)
	if _, local := o.Strategy.(Local); !dist && !local {
		return fmt.Errorf("train: deterministic training is not supported by strategy %T", o.Strategy)
	}
	for _, p := range o.Model.Parameters() {
		if p.DType() != tensor.Float32 {
			return fmt.Errorf("train: deterministic training needs float32 parameters, got %v", p.DType())
		}
	}
	st := &fixedState{}
	var seeds []int64
	for _, m := range o.Model.NamedModules() {
		if d, ok := m.Module.(*nn.Dropout); ok {
			st.dropout = append(st.dropout, d)
			seeds = append(seeds, int64(d.RNG().Uint64()))
		}
	}
	if dist {
		if err := fo.setupFixed(o.Model, seeds); err != nil {
			return err
		}
	}
	for _, v := range seeds {
		st.seeds = append(st.seeds, uint64(v))
	}
	t.fixed = st
	return nil
}

// mix64 is SplitMix64's finalizer: a seed per (layer, step, shard).
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// fixedStep runs the forward and backward passes of this rank's
// micro-shards of batch b (batch k of the epoch) and leaves the global
// batch's gradient, the same bits on every rank and for every number of
// ranks, in params' gradients. It adds the shards to the epoch's metric
// sums and returns the mean loss of this rank's rows.
func (t *Trainer) fixedStep(b *data.Batch, k int, params []*tensor.Tensor) (float64, error) {
	o := &t.opts
	st := t.fixed
	global, rank, ranks := b.Size, 0, 1
	fo, dist := o.Strategy.(fixedOrder)
	if dist {
		global, rank, ranks = fo.position()
	}
	if err := checkMicroShards(o.MicroShards, ranks); err != nil {
		return 0, err
	}
	s := o.MicroShards
	per := s / ranks
	total := 0
	for _, p := range params {
		total += p.Numel()
	}
	for len(st.shards) < per {
		st.shards = append(st.shards, make([]float32, total))
	}
	base := global * rank / ranks
	lossSum := 0.0
	for j := range per {
		shard := rank*per + j
		lo, hi := global*shard/s-base, global*(shard+1)/s-base
		buf := st.shards[j]
		if hi <= lo {
			clear(buf)
			continue
		}
		if hi > b.Size {
			return 0, fmt.Errorf("train: deterministic training: micro-shard %d needs rows [%d, %d) of a batch of %d", shard, lo, hi, b.Size)
		}
		sub := SubBatch(b, lo, hi)
		for i, d := range st.dropout {
			d.RNG().Seed(mix64(st.seeds[i] ^ mix64(uint64(t.globalStep)<<16|uint64(shard))))
		}
		out := o.Model.Forward(sub.X)
		loss := o.Loss(out, sub)
		lv := loss.Item()
		if math.IsNaN(lv) || math.IsInf(lv, 0) {
			return 0, &NonFiniteLossError{Epoch: t.epoch + 1, Batch: k + 1, Loss: lv}
		}
		o.Optimizer.ZeroGrad()
		loss.Backward()
		w := float32(float64(hi-lo) / float64(global))
		off := 0
		for _, p := range params {
			n := p.Numel()
			if g := p.Grad(); g != nil {
				kernel.MulScalarF32(buf[off:off+n], g.Float32s(), w)
			} else {
				clear(buf[off : off+n])
			}
			off += n
		}
		modelfile.AddBatch(&t.partial, lv, out, sub)
		lossSum += lv * float64(hi-lo)
		if shard == 0 {
			st.saveBuffers(o.Model)
		}
	}
	// The local part of the tree: adjacent shards, then pairs of pairs.
	for width := 1; width < per; width *= 2 {
		for j := 0; j+width < per; j += 2 * width {
			kernel.AddF32(st.shards[j], st.shards[j], st.shards[j+width])
		}
	}
	sum := st.shards[0]
	if dist {
		if err := fo.sumFixed(sum); err != nil {
			return 0, err
		}
	}
	off := 0
	for _, p := range params {
		n := p.Numel()
		if p.Grad() == nil {
			p.SetGrad(tensor.Zeros(tensor.Float32, p.Shape()...))
		}
		copy(p.Grad().Float32s(), sum[off:off+n])
		off += n
	}
	return lossSum / float64(max(b.Size, 1)), nil
}

// afterFixedStep gives every rank the buffers shard 0's forward left.
func (t *Trainer) afterFixedStep() error {
	st := t.fixed
	if st.saved != nil {
		for i, nb := range t.opts.Model.NamedBuffers() {
			nb.Tensor.CopyFrom(st.saved[i])
		}
	}
	if fo, ok := t.opts.Strategy.(fixedOrder); ok {
		return fo.syncBuffers(t.opts.Model)
	}
	return nil
}

// saveBuffers keeps a copy of the model's buffers (rank 0, after shard 0).
func (st *fixedState) saveBuffers(m nn.Layer) {
	bufs := m.NamedBuffers()
	if len(bufs) == 0 {
		return
	}
	if st.saved == nil {
		st.saved = make([]*tensor.Tensor, len(bufs))
		for i, nb := range bufs {
			st.saved[i] = nb.Tensor.Clone()
		}
		return
	}
	for i, nb := range bufs {
		st.saved[i].CopyFrom(nb.Tensor)
	}
}

// SubBatch returns rows [lo, hi) of b as a batch of views.
func SubBatch(b *data.Batch, lo, hi int) *data.Batch {
	sub := &data.Batch{X: b.X.Narrow(0, lo, hi-lo), Size: hi - lo}
	if b.Labels != nil {
		sub.Labels = b.Labels.Narrow(0, lo, hi-lo)
	}
	if b.Targets != nil {
		sub.Targets = b.Targets.Narrow(0, lo, hi-lo)
	}
	if b.Rows != nil {
		sub.Rows = b.Rows[lo:hi]
	}
	return sub
}
