package ddp

import (
	"errors"
	"fmt"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/tensor"
)

// ShardedOptimizer is the optimizer of ZeRO stage 1 (Options.ShardOptimizer):
// it runs an ordinary optimizer over this rank's part of every gradient
// bucket only, so its state (Adam's two moments, momentum) takes 1/N of
// the memory, and after each update all-gathers the parts into every
// rank's parameters. The step equals plain data parallelism's: the same
// reduced gradients, the same element-wise update.
//
// Build it before the DDP exists (it is what a trainer and an LR schedule
// hold) with the factory of the optimizer to shard, then BindSharded; the
// learning rates set before binding carry over. A single parameter group
// (the factory's optimizer sees flat parts of buckets, not parameters).
type ShardedOptimizer struct {
	factory func(params []*tensor.Tensor) (optim.Optimizer, error)
	d       *DDP
	inner   optim.Optimizer
	lr      map[int]float64
}

// NewShardedOptimizer returns a ShardedOptimizer that will run
// factory's optimizer over this rank's parts once bound.
func NewShardedOptimizer(factory func(params []*tensor.Tensor) (optim.Optimizer, error)) *ShardedOptimizer {
	return &ShardedOptimizer{factory: factory, lr: map[int]float64{}}
}

// errUnbound is returned by a ShardedOptimizer used before BindSharded.
var errUnbound = errors.New("ddp: ShardedOptimizer used before BindSharded")

// BindSharded gives s this rank's part of every bucket: a flat parameter
// tensor per bucket, holding the parameters' current values, whose
// gradient is the bucket's reduce-scattered part.
func (d *DDP) BindSharded(s *ShardedOptimizer) error {
	if !d.opts.ShardOptimizer {
		return errors.New("ddp: BindSharded needs Options.ShardOptimizer")
	}
	if s.d != nil {
		return errors.New("ddp: ShardedOptimizer bound twice")
	}
	r, size := d.g.Rank(), d.g.Size()
	var mine []float32 // with shared buckets: this rank's part of the parameter window
	if d.win != nil {
		total := 0
		for _, b := range d.buckets {
			b.poff = total
			total += len(b.f32) / size
		}
		pw, err := comm.NewWindow(d.g, total)
		if err != nil && !errors.Is(err, comm.ErrNoWindow) {
			return fmt.Errorf("ddp: the shared parameter parts: %w", err)
		}
		if err == nil {
			d.pwin, mine = pw, pw.Part(r)
		}
	}
	parts := make([]*tensor.Tensor, len(d.buckets))
	for i, b := range d.buckets {
		m := len(b.f32) / size
		b.gatherPieces = b.gatherPieces[:0]
		n := 0
		for _, p := range b.params {
			if !p.t.IsContiguous() {
				return fmt.Errorf("ddp: parameter %q is not contiguous; the sharded optimizer gathers into the parameters' storage", p.name)
			}
			b.gatherPieces = append(b.gatherPieces, p.t.Float32s())
			n += p.n
		}
		if pad := len(b.f32) - n; pad > 0 {
			b.gatherPieces = append(b.gatherPieces, make([]float32, pad))
		}
		own := make([]float32, m)
		if mine != nil {
			own = mine[b.poff : b.poff+m : b.poff+m]
		}
		for _, p := range b.params { // this rank's part of the parameters
			lo, hi := max(p.off, r*m), min(p.off+p.n, (r+1)*m)
			if lo < hi {
				copy(own[lo-r*m:], p.t.Float32s()[lo-p.off:hi-p.off])
			}
		}
		b.shardGrad = b.f32[r*m : (r+1)*m : (r+1)*m]
		b.shardParam = tensor.FromFloat32(own, m).SetRequiresGrad(true)
		b.shardParam.SetGrad(tensor.FromFloat32(b.shardGrad, m))
		parts[i] = b.shardParam
	}
	inner, err := s.factory(parts)
	if err != nil {
		return fmt.Errorf("ddp: the sharded optimizer: %w", err)
	}
	for g, lr := range s.lr {
		inner.SetLR(g, lr)
	}
	s.d, s.inner = d, inner
	return nil
}

// Step updates this rank's parts with the reduced gradients and
// all-gathers every bucket's parts into the parameters.
func (s *ShardedOptimizer) Step() error {
	if s.inner == nil {
		return errUnbound
	}
	if err := s.inner.Step(); err != nil {
		return err
	}
	d := s.d
	if d.pwin != nil {
		return s.gatherShared()
	}
	works := make([]*comm.Work, len(d.buckets))
	for i, b := range d.buckets {
		works[i] = comm.AllGatherIntoAsync(d.g, b.gatherPieces, b.shardParam.Float32s())
	}
	var errs []error
	for i := range d.buckets {
		if err := works[i].Wait(); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("ddp: gathering the updated parameters: %w", errors.Join(errs...))
	}
	return nil
}

// gatherShared copies every rank's updated part of every bucket from the
// parameter window into the parameters, once all have updated theirs.
// The barrier also ends the reading of the gradient buckets that
// DDP.Sync began, so they may be cleared for the next step; and a rank
// overwrites its parameter part in the next step only after the next
// step's gradient barrier, which every rank passes once done copying.
func (s *ShardedOptimizer) gatherShared() error {
	d := s.d
	if err := d.pwin.Barrier(); err != nil {
		return fmt.Errorf("ddp: gathering the updated parameters: %w", err)
	}
	size := d.g.Size()
	for _, b := range d.buckets {
		m := len(b.f32) / size
		for _, p := range b.params {
			dst := p.t.Float32s()
			for q := p.off / max(m, 1); q < size && q*m < p.off+p.n; q++ {
				lo, hi := max(p.off, q*m), min(p.off+p.n, (q+1)*m)
				if lo < hi {
					src := d.pwin.Part(q)[b.poff+lo-q*m : b.poff+hi-q*m]
					copy(dst[lo-p.off:hi-p.off], src)
				}
			}
		}
	}
	return nil
}

// ZeroGrad clears the gradient buckets (the parameters' Grads).
func (s *ShardedOptimizer) ZeroGrad() {
	if s.d == nil {
		return
	}
	for _, b := range s.d.buckets {
		clear(b.f32)
	}
}

// NumGroups is 1.
func (s *ShardedOptimizer) NumGroups() int { return 1 }

// LR returns the learning rate of group g.
func (s *ShardedOptimizer) LR(g int) float64 {
	if s.inner == nil {
		return s.lr[g]
	}
	return s.inner.LR(g)
}

// SetLR sets the learning rate of group g (kept until bound).
func (s *ShardedOptimizer) SetLR(g int, lr float64) {
	s.lr[g] = lr
	if s.inner != nil {
		s.inner.SetLR(g, lr)
	}
}

// State returns this rank's part of the optimizer state: not a state a
// single process could load (checkpoints of sharded runs are not
// supported yet).
func (s *ShardedOptimizer) State() *optim.StateDict {
	if s.inner == nil {
		return &optim.StateDict{}
	}
	return s.inner.State()
}

// LoadState refuses: see State.
func (s *ShardedOptimizer) LoadState(*optim.StateDict) error {
	return errors.New("ddp: a sharded optimizer's state cannot be restored (checkpoints of ZeRO runs are not supported yet)")
}

// StateBytes is the memory of this rank's optimizer state buffers.
func (s *ShardedOptimizer) StateBytes() int64 {
	if s.inner == nil {
		return 0
	}
	return StateBytes(s.inner)
}

// StateBytes is the memory of an optimizer's state buffers.
func StateBytes(o optim.Optimizer) int64 {
	n := int64(0)
	for _, t := range o.State().Tensors {
		n += int64(t.Numel() * t.DType().Size())
	}
	return n
}
