package tensorcomm

import (
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/commtest"
	"github.com/fathom-ml/fathom/tensor"
)

// TestTensorCollectives checks the tensor-facing wrappers against the
// single-process answer on 3 ranks, for every supported dtype.
func TestTensorCollectives(t *testing.T) {
	const n = 3
	gs := commtest.Groups(t, n, comm.TransportTCP, nil)
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64, tensor.Int64} {
		// rank r holds r+1 at every position of a 2x3 tensor.
		ts := make([]*tensor.Tensor, n)
		for r := range ts {
			ts[r] = tensor.Full(dt, float64(r+1), 2, 3)
		}
		commtest.MustAll(t, "AllReduceTensor", commtest.OnAll(gs, func(g *comm.Group) error { return AllReduceTensor(g, ts[g.Rank()], comm.Sum) }))
		for r, x := range ts {
			for i := 0; i < 2; i++ {
				for j := 0; j < 3; j++ {
					if v := x.At(i, j); v != 6 {
						t.Fatalf("%v AllReduceTensor: rank %d [%d,%d] = %v, want 6", dt, r, i, j, v)
					}
				}
			}
		}
		for r := range ts {
			ts[r] = tensor.Full(dt, float64(10*r), 4)
		}
		commtest.MustAll(t, "BroadcastTensor", commtest.OnAll(gs, func(g *comm.Group) error { return BroadcastTensor(g, ts[g.Rank()], 2) }))
		for r, x := range ts {
			if v := x.At(3); v != 20 {
				t.Fatalf("%v BroadcastTensor: rank %d got %v, want 20", dt, r, v)
			}
		}
		outs := make([]*tensor.Tensor, n)
		commtest.MustAll(t, "AllGatherTensor", commtest.OnAll(gs, func(g *comm.Group) error {
			var err error
			outs[g.Rank()], err = AllGatherTensor(g, tensor.Full(dt, float64(g.Rank()), 2))
			return err
		}))
		for r, out := range outs {
			if s := out.Shape(); len(s) != 2 || s[0] != n || s[1] != 2 {
				t.Fatalf("%v AllGatherTensor: rank %d shape %v", dt, r, s)
			}
			for k := 0; k < n; k++ {
				if v := out.At(k, 1); v != float64(k) {
					t.Fatalf("%v AllGatherTensor: rank %d row %d = %v, want %d", dt, r, k, v, k)
				}
			}
		}
	}
}

func TestTensorCollectivesRejectBadInput(t *testing.T) {
	gs := commtest.Groups(t, 1, comm.TransportTCP, nil)
	g := gs[0]
	nc := tensor.Zeros(tensor.Float32, 3, 4).Transpose(0, 1)
	if err := AllReduceTensor(g, nc, comm.Sum); err == nil || !strings.Contains(err.Error(), "not contiguous") {
		t.Errorf("non-contiguous: %v", err)
	}
	if err := AllReduceTensor(g, tensor.Zeros(tensor.Int32, 3), comm.Sum); err == nil || !strings.Contains(err.Error(), "int32") {
		t.Errorf("int32: %v", err)
	}
}
