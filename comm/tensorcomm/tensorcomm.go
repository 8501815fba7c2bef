// Package tensorcomm runs the collectives of package comm on tensors: the
// slice collectives on a tensor's storage in place, without copying. It
// keeps the collective core free of any tensor dependency.
//
// The tensor must be contiguous and of dtype float32, float64 or int64; its
// shape and dtype must agree on every rank. The functions bypass autograd:
// use them on parameters, gradients and buffers (as data-parallel training
// does), not inside a recorded graph. They work on any *comm.Group,
// subgroups included.
//
//	g, _ := comm.NewFromEnv(ctx)
//	err := tensorcomm.AllReduceTensor(g, grad, comm.Avg)
package tensorcomm

import (
	"fmt"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/tensor"
)

// AllReduceTensor reduces t across the group in place with op.
func AllReduceTensor(g *comm.Group, t *tensor.Tensor, op comm.ReduceOp) error {
	return AllReduceTensorAsync(g, t, op).Wait()
}

// AllReduceTensorAsync starts AllReduceTensor and returns its handle.
func AllReduceTensorAsync(g *comm.Group, t *tensor.Tensor, op comm.ReduceOp) *comm.Work {
	switch t.DType() {
	case tensor.Float32:
		return onStorage(g, "AllReduceTensor", t, func(x []float32) *comm.Work { return comm.AllReduceAsync(g, x, op) })
	case tensor.Float64:
		return onStorage(g, "AllReduceTensor", t, func(x []float64) *comm.Work { return comm.AllReduceAsync(g, x, op) })
	case tensor.Int64:
		return onStorage(g, "AllReduceTensor", t, func(x []int64) *comm.Work { return comm.AllReduceAsync(g, x, op) })
	}
	return comm.DoneWork(dtypeError("AllReduceTensor", t))
}

// BroadcastTensor overwrites t on every rank with root's t.
func BroadcastTensor(g *comm.Group, t *tensor.Tensor, root int) error {
	var w *comm.Work
	switch t.DType() {
	case tensor.Float32:
		w = onStorage(g, "BroadcastTensor", t, func(x []float32) *comm.Work { return comm.BroadcastAsync(g, x, root) })
	case tensor.Float64:
		w = onStorage(g, "BroadcastTensor", t, func(x []float64) *comm.Work { return comm.BroadcastAsync(g, x, root) })
	case tensor.Int64:
		w = onStorage(g, "BroadcastTensor", t, func(x []int64) *comm.Work { return comm.BroadcastAsync(g, x, root) })
	default:
		return dtypeError("BroadcastTensor", t)
	}
	return w.Wait()
}

// AllGatherTensor returns a new tensor of shape [world, t.Shape()...] whose
// row r is rank r's t.
func AllGatherTensor(g *comm.Group, t *tensor.Tensor) (*tensor.Tensor, error) {
	if !t.IsContiguous() {
		return nil, fmt.Errorf("tensorcomm: AllGatherTensor: rank %d: tensor of shape %v is not contiguous", g.Rank(), t.Shape())
	}
	shape := append([]int{g.Size()}, t.Shape()...)
	out := tensor.Zeros(t.DType(), shape...)
	var err error
	switch t.DType() {
	case tensor.Float32:
		err = comm.AllGather(g, out.Float32s(), t.Float32s())
	case tensor.Float64:
		err = comm.AllGather(g, out.Float64s(), t.Float64s())
	case tensor.Int64:
		err = comm.AllGather(g, out.Int64s(), t.Int64s())
	default:
		return nil, dtypeError("AllGatherTensor", t)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// onStorage runs start on t's storage when t is contiguous.
func onStorage[T comm.Number](g *comm.Group, op string, t *tensor.Tensor, start func([]T) *comm.Work) *comm.Work {
	if !t.IsContiguous() {
		return comm.DoneWork(fmt.Errorf("tensorcomm: %s: rank %d: tensor of shape %v is not contiguous", op, g.Rank(), t.Shape()))
	}
	var x []T
	switch p := any(&x).(type) {
	case *[]float32:
		*p = t.Float32s()
	case *[]float64:
		*p = t.Float64s()
	case *[]int64:
		*p = t.Int64s()
	}
	return start(x)
}

func dtypeError(op string, t *tensor.Tensor) error {
	return fmt.Errorf("tensorcomm: %s: dtype %v is not supported (float32, float64 or int64)", op, t.DType())
}
