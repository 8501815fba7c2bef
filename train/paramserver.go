package train

import (
	"errors"
	"fmt"
	"iter"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ddp"
	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/ps"
	"github.com/fathom-ml/fathom/tensor"
)

// ParameterServer is the Strategy of a worker of parameter-server training
// (package ps). The optimizer runs on the servers: the trainer's optimizer
// is a *ps.Optimizer whose Step pushes the gradients and pulls the updated
// parameters. The workers split every global batch as DataParallel does
// (over the workers' group, which also sums the metrics and, in
// deterministic training, carries worker 0's dropout seeds).
//
// Synchronous (the default): each worker's gradient is weighted by its
// part's share of the global batch, and the servers sum the workers'
// gradients in recursive doubling's order before one optimizer step, so
// the step is DataParallel's; with deterministic training (MicroShards)
// it is bitwise the same. Asynchronous: each worker pushes its own mean
// gradient, which the servers apply as it arrives (one optimizer step per
// push), within the staleness bound.
//
// Checkpoints (synchronous servers): the *ps.Optimizer is a StateFetcher,
// so the checkpoint worker 0 writes holds the servers' optimizer state,
// and after LoadCheckpoint, Setup sends it back to the servers after the
// parameters.
type ParameterServer struct {
	dp    *DataParallel // over the workers
	opt   *ps.Optimizer
	async bool
	scale float32
}

// NewParameterServer returns the strategy of this worker, in workers (the
// group of all workers, worker i being rank i), sending its steps through
// opt.
func NewParameterServer(workers *comm.Group, opt *ps.Optimizer, async bool) *ParameterServer {
	return &ParameterServer{dp: NewDataParallel(workers, ddp.Options{}), opt: opt, async: async, scale: 1}
}

// Setup checks that the trainer's optimizer is the strategy's, lets worker
// 0 send its parameters to the servers and pulls them on every worker.
func (s *ParameterServer) Setup(_ nn.Layer, opt optim.Optimizer) error {
	if opt != optim.Optimizer(s.opt) {
		return fmt.Errorf("parameter server: the trainer's optimizer must be the strategy's *ps.Optimizer, got %T", opt)
	}
	return s.opt.Start(s.dp.g.Rank() == 0)
}

// Batches returns this worker's part of every global batch (as
// DataParallel) and, synchronously, weights its gradient by the part's
// share of the global batch.
func (s *ParameterServer) Batches(l *data.Loader, epoch, start int) (int, iter.Seq2[int, *data.Batch]) {
	n, batches := s.dp.Batches(l, epoch, start)
	return n, func(yield func(int, *data.Batch) bool) {
		for k, b := range batches {
			s.scale = 1
			if !s.async {
				s.scale = float32(float64(b.Size) / float64(max(s.dp.global, 1)))
			}
			if !yield(k, b) {
				return
			}
		}
	}
}

// AfterBackward weights the gradients (synchronous mode); the push
// happens in the optimizer's Step.
func (s *ParameterServer) AfterBackward(params []*tensor.Tensor) error {
	if s.scale == 1 {
		return nil
	}
	for _, p := range params {
		if g := p.Grad(); g != nil {
			v := g.Float32s()
			kernel.MulScalarF32(v, v, s.scale)
		}
	}
	return nil
}

// ReduceMetrics sums the metric accumulators of all workers
// (synchronous). An asynchronous worker keeps its own: after setup it
// talks to the servers only, so that a lost worker does not stop the
// others (the metrics worker 0 reports are those of its part of the data).
func (s *ParameterServer) ReduceMetrics(sums *metrics.Accumulator) error {
	if s.async {
		return nil
	}
	return s.dp.ReduceMetrics(sums)
}

// IsMain reports whether this is worker 0.
func (s *ParameterServer) IsMain() bool { return s.dp.IsMain() }

// Workers returns the data-parallel view of the workers (batch sharding
// and metric sums), for evaluation.
func (s *ParameterServer) Workers() *DataParallel { return s.dp }

// setupFixed gives every worker worker 0's dropout seeds and parameters
// (deterministic training), then starts as Setup.
func (s *ParameterServer) setupFixed(model nn.Layer, seeds []int64) error {
	if s.async {
		return errors.New("parameter server: deterministic training needs the synchronous mode")
	}
	if err := s.dp.setupFixed(model, seeds); err != nil {
		return err
	}
	return s.opt.Start(s.dp.g.Rank() == 0)
}

// position is DataParallel's over the workers.
func (s *ParameterServer) position() (global, rank, ranks int) { return s.dp.position() }

// sumFixed leaves x as it is: the servers sum the workers' gradients, in
// the same tree.
func (s *ParameterServer) sumFixed([]float32) error { return nil }

// syncBuffers copies worker 0's buffers to every worker.
func (s *ParameterServer) syncBuffers(model nn.Layer) error { return s.dp.syncBuffers(model) }
