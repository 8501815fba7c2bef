package train

import (
	"fmt"
	"iter"
	"time"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/modelfile"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/pipe"
	"github.com/fathom-ml/fathom/tensor"
)

// Stepper is a Strategy that runs a step's forward and backward passes
// itself, such as a pipeline schedule over processes that each hold part
// of the model. The Trainer zeroes the gradients, calls Step, then
// AfterBackward, clipping and the optimizer step as for any strategy; it
// evaluates through Evaluate.
type Stepper interface {
	Strategy
	// Step runs the forward and backward passes of this process's part
	// of batch b, leaving the gradients of its parameters, and adds the
	// rows whose loss it computes to sums. It returns the batch's mean
	// loss and whether this process knows it (a pipeline's last stage
	// does, the others do not).
	Step(b *data.Batch, loss LossFunc, sums *metrics.Accumulator) (lv float64, known bool, err error)
	// Evaluate adds this process's part of the scores of l's batches to
	// sums (the model is in evaluation mode); ReduceMetrics then combines
	// the processes' sums.
	Evaluate(l *data.Loader, loss LossFunc, sums *metrics.Accumulator) error
}

// stepperStep is the step of a Stepper strategy.
func stepperStep(t *Trainer, b *data.Batch, k, _ int, params []*tensor.Tensor) (float64, time.Duration, error) {
	sp := t.opts.Strategy.(Stepper)
	t.opts.Optimizer.ZeroGrad()
	lv, known, err := sp.Step(b, t.opts.Loss, &t.partial)
	if err != nil {
		return lv, 0, t.stepErr(k, err)
	}
	t.lossUnknown = !known
	s0 := time.Now()
	err = sp.AfterBackward(params)
	sync := time.Since(s0)
	if err == nil {
		err = t.update(b, params)
	}
	if err != nil {
		return lv, sync, t.stepErr(k, err)
	}
	return lv, sync, nil
}

// Pipeline is the Stepper of pipeline parallelism (package pipe): the
// model's layers cut into the stages of Stage's group, run in its
// schedule (GPipe or 1F1B) over micro-batches, optionally with
// data-parallel replicas of the whole pipeline. Every process sees every
// global batch; replica d of Replicas takes the d-th part of it, and after
// the batch's passes each stage sums its gradients, weighted by the
// replica's share, with the same stage of the other replicas (Replica
// group). The Trainer's optimizer holds the stage's parameters only.
type Pipeline struct {
	// Stage is this process's stage of its replica's pipeline.
	Stage *pipe.Stage
	// Group is the whole job: metrics are summed over it, and its rank 0
	// is the main process.
	Group *comm.Group
	// Replicas is the number of data-parallel copies of the pipeline (1
	// or more), Replica this process's; ReplicaGroup holds the same stage
	// of every replica (nil with one replica).
	Replica, Replicas int
	ReplicaGroup      *comm.Group
	// FirstStep, if set, is called after the first step with the stage's
	// statistics (its peak activation memory), for a memory check.
	FirstStep func(pipe.Stats) error

	share float32   // this replica's share of the current batch
	flat  []float32 // the stage's gradients, for the replicas' all-reduce
	steps int
}

// Setup does nothing: every process built the same model from the seed.
func (p *Pipeline) Setup(nn.Layer, optim.Optimizer) error { return nil }

// Batches returns all of l's batches of the epoch from start on: every
// stage of every replica walks every global batch.
func (p *Pipeline) Batches(l *data.Loader, epoch, start int) (int, iter.Seq2[int, *data.Batch]) {
	return l.Len(), l.EpochFrom(epoch, start)
}

// IsMain reports whether this process is rank 0 of the job (stage 0 of
// replica 0).
func (p *Pipeline) IsMain() bool { return p.Group.Rank() == 0 }

// Step runs this replica's part of b through the stage's schedule.
func (p *Pipeline) Step(b *data.Batch, loss LossFunc, sums *metrics.Accumulator) (float64, bool, error) {
	D := max(p.Replicas, 1)
	part := SubBatch(b, b.Size*p.Replica/D, b.Size*(p.Replica+1)/D)
	p.share = 1
	if b.Size > 0 {
		p.share = float32(part.Size) / float32(b.Size)
	}
	var lv float64
	if part.Size > 0 {
		var err error
		lv, err = p.Stage.Step(part.X, part.Size, func(out *tensor.Tensor, lo, hi int) *tensor.Tensor {
			sub := SubBatch(part, lo, hi)
			l := loss(out, sub)
			modelfile.AddBatch(sums, l.Item(), out, sub)
			return l
		})
		if err != nil {
			return lv, false, err
		}
	}
	if p.steps++; p.steps == 1 && p.FirstStep != nil {
		if err := p.FirstStep(p.Stage.Stats()); err != nil {
			return lv, false, err
		}
	}
	return lv, p.Stage.IsLast() && part.Size > 0, nil
}

// AfterBackward sums the stage's gradients, weighted by the replicas'
// shares of the batch, over the replicas.
func (p *Pipeline) AfterBackward([]*tensor.Tensor) error {
	if p.ReplicaGroup == nil {
		return nil
	}
	params := p.Stage.Parameters()
	if p.flat == nil {
		n := 0
		for _, q := range params {
			n += q.Numel()
		}
		p.flat = make([]float32, n)
	}
	off := 0
	for _, q := range params {
		n := q.Numel()
		if g := q.Grad(); g != nil {
			kernel.MulScalarF32(p.flat[off:off+n], g.Float32s(), p.share)
		} else {
			clear(p.flat[off : off+n])
		}
		off += n
	}
	if err := comm.AllReduce(p.ReplicaGroup, p.flat, comm.Sum); err != nil {
		return fmt.Errorf("pipeline: summing the replicas' gradients: %w", err)
	}
	off = 0
	for _, q := range params {
		n := q.Numel()
		if q.Grad() == nil {
			q.SetGrad(tensor.Zeros(tensor.Float32, q.Shape()...))
		}
		copy(q.Grad().Float32s(), p.flat[off:off+n])
		off += n
	}
	return nil
}

// Evaluate runs l's batches forward through replica 0's pipeline; its last
// stage adds the scores.
func (p *Pipeline) Evaluate(l *data.Loader, loss LossFunc, sums *metrics.Accumulator) error {
	if p.Replica != 0 {
		return nil
	}
	for _, b := range l.Epoch(0) {
		sink := func(out *tensor.Tensor, lo, hi int) {
			sub := SubBatch(b, lo, hi)
			modelfile.AddBatch(sums, loss(out, sub).Item(), out, sub)
		}
		if err := p.Stage.Forward(b.X, b.Size, sink); err != nil {
			return err
		}
	}
	return nil
}

// ReduceMetrics sums the metric sums over the job: only last stages hold
// any (the training sums of every replica, the evaluation sums of
// replica 0).
func (p *Pipeline) ReduceMetrics(acc *metrics.Accumulator) error {
	sums := []float64{acc.LossSum, acc.SqErr, float64(acc.Correct), float64(acc.N)}
	if err := comm.AllReduce(p.Group, sums, comm.Sum); err != nil {
		return fmt.Errorf("pipeline: summing the metrics: %w", err)
	}
	acc.LossSum, acc.SqErr, acc.Correct, acc.N = sums[0], sums[1], int(sums[2]), int(sums[3])
	return nil
}

// Part is this process's rank in the job: each stage writes its own part
// of a checkpoint (ShardedCheckpoints).
func (p *Pipeline) Part() int { return p.Group.Rank() }

// Parts is the number of processes of the job.
func (p *Pipeline) Parts() int { return p.Group.Size() }

// Barrier waits for every process of the job.
func (p *Pipeline) Barrier() error { return comm.Barrier(p.Group) }
