package ddp

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/commtest"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/tensor"
)

// trainAdam runs 2 epochs of Adam over p on rank g.Rank(), plain or with
// ZeRO-1, and returns the weights and the optimizer's state bytes.
func trainAdam(g *comm.Group, p problem, shard bool) ([]float32, int64, error) {
	m := mlp(uint64(1 + 100*g.Rank()))
	d, err := New(m, g, Options{FirstBucketMB: 0.0005, BucketCapMB: 0.001, ShardOptimizer: shard})
	if err != nil {
		return nil, 0, err
	}
	defer d.Close()
	if shard && d.g.Options().Transport == comm.TransportSHM && (d.win == nil) {
		return nil, 0, fmt.Errorf("rank %d: ZeRO-1 over shared memory without the shared gradient buckets", g.Rank())
	}
	adam := func(ps []*tensor.Tensor) (optim.Optimizer, error) {
		return optim.NewAdam(ps, optim.AdamOptions{LR: 0.01, WeightDecay: 0.001})
	}
	var opt optim.Optimizer
	if shard {
		s := NewShardedOptimizer(adam)
		if err := d.BindSharded(s); err != nil {
			return nil, 0, err
		}
		opt = s
		if (d.win == nil) != (d.pwin == nil) {
			return nil, 0, fmt.Errorf("rank %d: shared gradient buckets %v, shared parameter parts %v", g.Rank(), d.win != nil, d.pwin != nil)
		}
	} else if opt, err = adam(m.Parameters()); err != nil {
		return nil, 0, err
	}
	for range 2 {
		for k := range p.steps() {
			lo, hi := p.part(k, g.Rank(), g.Size())
			glo, _ := p.part(k, 0, g.Size())
			_, ghi := p.part(k, g.Size()-1, g.Size())
			d.SetScale(float64(hi-lo) / float64(ghi-glo))
			opt.ZeroGrad()
			if hi > lo {
				x, y := p.batch(lo, hi)
				loss := lossOf(m, x, y)
				if err := d.Prepare(loss); err != nil {
					return nil, 0, err
				}
				loss.Backward()
			}
			if err := d.Sync(); err != nil {
				return nil, 0, err
			}
			if err := opt.Step(); err != nil {
				return nil, 0, err
			}
		}
	}
	return flat(m), StateBytes(opt), nil
}

// ZeRO-1 trains the weights plain data parallelism trains (the same
// reduced gradients, the same element-wise update), on every rank, with
// each rank's optimizer state a 1/N part: bitwise on 2 ranks, where the
// reduce-scatter cuts the buckets where the ring all-reduce does. Over
// shared memory (the buckets and parameter parts in shared windows, read
// in place) it trains bitwise what it trains over TCP (the in-place ring).
func TestShardedOptimizerMatchesPlain(t *testing.T) {
	p := newProblem(29, 12)
	for _, n := range []int{2, 3} {
		var overTCP [][]float32
		for _, tr := range []comm.Transport{comm.TransportTCP, comm.TransportSHM} {
			t.Run(fmt.Sprintf("%dranks/%s", n, map[comm.Transport]string{comm.TransportTCP: "tcp", comm.TransportSHM: "shm"}[tr]), func(t *testing.T) {
				gs := commtest.Groups(t, n, tr, nil)
				var plain, zero [][]float32
				var plainBytes, zeroBytes []int64
				for _, shard := range []bool{false, true} {
					ws := make([][]float32, n)
					bytes := make([]int64, n)
					errs := commtest.OnAll(gs, func(g *comm.Group) error {
						var err error
						ws[g.Rank()], bytes[g.Rank()], err = trainAdam(g, p, shard)
						return err
					})
					commtest.MustAll(t, "train", errs)
					if shard {
						zero, zeroBytes = ws, bytes
					} else {
						plain, plainBytes = ws, bytes
					}
				}
				worst := 0.0
				for r := range n {
					if !slices.Equal(zero[r], zero[0]) {
						t.Errorf("rank %d's weights differ from rank 0's", r)
					}
					for i := range plain[0] {
						worst = max(worst, math.Abs(float64(zero[r][i]-plain[0][i])))
					}
				}
				t.Logf("largest difference from plain data parallelism: %.3g", worst)
				if worst > 1e-6 || (n == 2 && worst != 0) {
					t.Errorf("ZeRO-1 weights differ from plain data parallelism's by %g", worst)
				}
				if tr == comm.TransportTCP {
					overTCP = zero
				} else if overTCP != nil && !slices.Equal(zero[0], overTCP[0]) {
					t.Errorf("ZeRO-1 over shared memory trains other weights than over TCP")
				}
				total := int64(0)
				for _, b := range zeroBytes {
					total += b
				}
				// The parts cover the padded buckets: at most n−1 elements of
				// padding per bucket and moment buffer.
				if total < plainBytes[0] || zeroBytes[0] > plainBytes[0]/int64(n)+int64(64*n*8) {
					t.Errorf("optimizer state bytes: plain %d per rank; sharded %v", plainBytes[0], zeroBytes)
				}
				t.Logf("optimizer state: plain %d bytes per rank, sharded %v", plainBytes[0], zeroBytes)
			})
		}
	}
}

func TestShardedOptimizerMisuse(t *testing.T) {
	s := NewShardedOptimizer(func(ps []*tensor.Tensor) (optim.Optimizer, error) { return optim.NewSGD(ps, optim.SGDOptions{LR: 0.1}) })
	if err := s.Step(); err == nil {
		t.Fatal("Step before BindSharded: no error")
	}
	s.SetLR(0, 0.5)
	if s.LR(0) != 0.5 {
		t.Fatalf("LR before binding: %v", s.LR(0))
	}
	gs := commtest.Groups(t, 2, comm.TransportTCP, nil)
	errs := commtest.OnAll(gs, func(g *comm.Group) error {
		d, err := New(nn.NewSequential(nn.NewLinear(tensor.NewRNG(1), 3, 2)), g, Options{})
		if err != nil {
			return err
		}
		return d.BindSharded(NewShardedOptimizer(nil))
	})
	for r, err := range errs {
		if err == nil {
			t.Errorf("rank %d: BindSharded without Options.ShardOptimizer accepted", r)
		}
	}
}
