package pipe

import (
	"errors"
	"fmt"
	"time"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// maxDims bounds an activation's rank in the shape header.
const maxDims = 7

// LossFunc returns the mean loss of rows [lo, hi) of the global batch
// from the last stage's output for them.
type LossFunc func(out *tensor.Tensor, lo, hi int) *tensor.Tensor

// Stage is one rank's part of a pipeline: rank s of the group runs layers
// of stage s, receives its input activations from rank s−1 and sends its
// outputs to rank s+1; gradients go the other way. Forward activations
// and backward gradients travel on two subgroups of their own, so that a
// stage's send one way never queues behind its receive the other way.
type Stage struct {
	g, fwd, bwd *comm.Group
	layers      []nn.Layer
	sched       Schedule
	micro       int
	last        Stats
}

// Stats describe the last Step.
type Stats struct {
	// Wall is the step's time; Busy the time this stage computed
	// (forward and backward passes, not waiting or sending).
	Wall, Busy time.Duration
	// PeakActivationBytes is the most activation memory the stage held at
	// once: for each micro-batch between its forward and its backward
	// pass, the input and every layer's output (what the backward pass
	// keeps).
	PeakActivationBytes int64
	// Micro is the number of micro-batches the batch was cut into.
	Micro int
}

// Bubble returns the fraction of the step this stage idled.
func (s Stats) Bubble() float64 {
	if s.Wall <= 0 {
		return 0
	}
	return 1 - float64(s.Busy)/float64(s.Wall)
}

// NewStage returns the stage of g's rank, running layers with sched over
// micro micro-batches per batch. Every rank of g calls it (it makes two
// subgroups of g).
func NewStage(g *comm.Group, layers []nn.Layer, sched Schedule, micro int) (*Stage, error) {
	if micro < 1 {
		return nil, fmt.Errorf("pipe: want at least one micro-batch, got %d", micro)
	}
	if len(layers) == 0 {
		return nil, fmt.Errorf("pipe: stage %d has no layers", g.Rank())
	}
	all := make([]int, g.Size())
	for i := range all {
		all[i] = i
	}
	fwd, err := g.Subgroup(all)
	if err != nil {
		return nil, err
	}
	bwd, err := g.Subgroup(all)
	if err != nil {
		return nil, err
	}
	return &Stage{g: g, fwd: fwd, bwd: bwd, layers: layers, sched: sched, micro: micro}, nil
}

// Index returns the stage's number (its rank).
func (st *Stage) Index() int { return st.g.Rank() }

// Stages returns the number of stages.
func (st *Stage) Stages() int { return st.g.Size() }

// IsLast reports whether this stage computes the loss.
func (st *Stage) IsLast() bool { return st.g.Rank() == st.g.Size()-1 }

// Stats returns the statistics of the last Step (Forward keeps them).
func (st *Stage) Stats() Stats { return st.last }

// Parameters returns the parameters of the stage's layers.
func (st *Stage) Parameters() []*tensor.Tensor {
	var ps []*tensor.Tensor
	for _, l := range st.layers {
		ps = append(ps, l.Parameters()...)
	}
	return ps
}

// micro-batch state between its forward and backward pass.
type inflight struct {
	in, out *tensor.Tensor
	loss    *tensor.Tensor // last stage: the weighted loss
	bytes   int64
}

// Step runs the forward and backward passes of one batch of rows rows,
// cut into micro-batches (at most rows of them), in the stage's schedule,
// accumulating the gradients of the stage's parameters: with the loss of
// each micro-batch weighted by its share of the batch, they add up to the
// gradient of the batch's mean loss. x is the batch's input on stage 0
// (nil elsewhere); loss is used on the last stage, which returns the
// batch's mean loss (0 elsewhere). The caller zeroes the gradients before
// and steps the optimizer after.
func (st *Stage) Step(x *tensor.Tensor, rows int, loss LossFunc) (float64, error) {
	return st.run(x, rows, loss, true, nil)
}

// Forward runs the forward passes only (evaluation): on the last stage
// each micro-batch's output for rows [lo, hi) goes to sink.
func (st *Stage) Forward(x *tensor.Tensor, rows int, sink func(out *tensor.Tensor, lo, hi int)) error {
	_, err := st.run(x, rows, nil, false, sink)
	return err
}

func (st *Stage) run(x *tensor.Tensor, rows int, loss LossFunc, train bool, sink func(*tensor.Tensor, int, int)) (float64, error) {
	s, K := st.g.Rank(), st.g.Size()
	if rows < 1 {
		return 0, fmt.Errorf("pipe: stage %d: a batch of %d rows", s, rows)
	}
	if s == 0 && (x == nil || x.Shape()[0] != rows) {
		return 0, fmt.Errorf("pipe: stage 0 needs the batch's input of %d rows", rows)
	}
	M := min(st.micro, rows)
	bounds := func(m int) (int, int) { return rows * m / M, rows * (m + 1) / M }
	ops := Ops(st.sched, K, M, s)
	if !train {
		ops = ops[:0]
		for m := range M {
			ops = append(ops, Op{Micro: m})
		}
	}
	state := make([]inflight, M)
	var works []*comm.Work // sends, waited for at the end of the step
	var live, peak int64
	var busy time.Duration
	start := time.Now()
	lossSum := 0.0
	for _, op := range ops {
		m := op.Micro
		lo, hi := bounds(m)
		f := &state[m]
		if !op.Backward {
			var in *tensor.Tensor
			if s == 0 {
				in = x.Narrow(0, lo, hi-lo)
			} else {
				var err error
				if in, err = st.recvActivation(m); err != nil {
					return 0, err
				}
				if train {
					in.SetRequiresGrad(true)
				} else {
					in = in.NoGrad()
				}
			}
			t0 := time.Now()
			out := in
			bytes := int64(in.Numel()) * 4
			if s == 0 {
				bytes = 0 // the batch's own rows: the data loader's memory
			}
			for _, l := range st.layers {
				out = l.Forward(out)
				bytes += int64(out.Numel()) * 4
			}
			var lv *tensor.Tensor
			if train && s == K-1 {
				l := loss(out, lo, hi)
				lossSum += l.Item() * float64(hi-lo) / float64(rows)
				lv = l.MulScalar(float64(hi-lo) / float64(rows))
			}
			busy += time.Since(t0)
			if s < K-1 {
				shape := out.Shape()
				if len(shape) > maxDims {
					return 0, fmt.Errorf("pipe: stage %d: an activation of %d dimensions (at most %d)", s, len(shape), maxDims)
				}
				h := make([]int64, maxDims+1)
				h[0] = int64(len(shape))
				for i, d := range shape {
					h[i+1] = int64(d)
				}
				data := out.Contiguous().Float32s()
				works = append(works, comm.SendAsync(st.fwd, h, s+1, 2*m), comm.SendAsync(st.fwd, data, s+1, 2*m+1))
			} else if sink != nil {
				sink(out, lo, hi)
			}
			if train {
				*f = inflight{in: in, out: out, loss: lv, bytes: bytes}
				live += bytes
				peak = max(peak, live)
			}
			continue
		}
		var err error
		t0 := time.Now()
		if s == K-1 {
			f.loss.Backward()
			busy += time.Since(t0)
		} else {
			g := make([]float32, f.out.Numel())
			if err = comm.Recv(st.bwd, g, s+1, m); err != nil {
				return 0, fmt.Errorf("pipe: stage %d: receiving the gradient of micro-batch %d from stage %d: %w", s, m, s+1, err)
			}
			t0 = time.Now()
			f.out.BackwardWith(tensor.FromFloat32(g, f.out.Shape()...))
			busy += time.Since(t0)
		}
		if s > 0 {
			gin := f.in.Grad()
			if gin == nil {
				return 0, fmt.Errorf("pipe: stage %d: micro-batch %d's input got no gradient", s, m)
			}
			data := gin.Contiguous().Float32s()
			works = append(works, comm.SendAsync(st.bwd, data, s-1, m))
		}
		live -= f.bytes
		*f = inflight{}
	}
	var errs []error
	for _, w := range works {
		if err := w.Wait(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return 0, fmt.Errorf("pipe: stage %d: sending: %w", s, err)
	}
	if train {
		st.last = Stats{Wall: time.Since(start), Busy: busy, PeakActivationBytes: peak, Micro: M}
	}
	return lossSum, nil
}

// recvActivation receives micro-batch m's input from the stage before.
func (st *Stage) recvActivation(m int) (*tensor.Tensor, error) {
	s := st.g.Rank()
	h := make([]int64, maxDims+1)
	if err := comm.Recv(st.fwd, h, s-1, 2*m); err != nil {
		return nil, fmt.Errorf("pipe: stage %d: receiving micro-batch %d from stage %d: %w", s, m, s-1, err)
	}
	n := h[0]
	if n < 1 || n > maxDims {
		return nil, fmt.Errorf("pipe: stage %d: an activation header of %d dimensions from stage %d", s, n, s-1)
	}
	shape := make([]int, n)
	size := 1
	for i := range shape {
		shape[i] = int(h[i+1])
		if shape[i] < 0 || shape[i] > 1<<30 {
			return nil, fmt.Errorf("pipe: stage %d: activation shape %v from stage %d", s, h[1:n+1], s-1)
		}
		size *= shape[i]
	}
	if size > 1<<30 {
		return nil, fmt.Errorf("pipe: stage %d: an activation of %d elements from stage %d", s, size, s-1)
	}
	data := make([]float32, size)
	if err := comm.Recv(st.fwd, data, s-1, 2*m+1); err != nil {
		return nil, fmt.Errorf("pipe: stage %d: receiving micro-batch %d from stage %d: %w", s, m, s-1, err)
	}
	return tensor.FromFloat32(data, shape...), nil
}
