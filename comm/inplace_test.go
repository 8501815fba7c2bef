package comm

import (
	"fmt"
	"testing"
)

// TestInPlaceCollectives checks ReduceScatterInPlace against the reference
// reduction (and bitwise against ReduceScatter on float inputs whose sums
// round) and AllGatherInto, with outputs cut into awkward pieces (empty
// ones, pieces spanning chunk boundaries), against AllGather.
func TestInPlaceCollectives(t *testing.T) {
	for _, tr := range transports {
		for n := 1; n <= 4; n++ {
			t.Run(fmt.Sprintf("%s/n=%d", tr.name, n), func(t *testing.T) {
				gs := newGroups(t, n, tr.tr, nil)
				checkInPlace[float32](t, gs)
				checkInPlace[float64](t, gs)
				checkInPlace[int64](t, gs)
			})
		}
	}
}

func checkInPlace[T Number](t *testing.T, gs []*Group) {
	t.Helper()
	size := len(gs)
	for _, m := range []int{0, 1, 3, 1000, 70000} {
		for _, op := range []ReduceOp{Sum, Avg, Max} {
			full := reference[T](size, size*m, op)
			outs := make([][]T, size)
			mustAll(t, "reducescatter in place", onAll(gs, func(g *Group) error {
				x := make([]T, size*m)
				for i := range x {
					x[i] = input[T](g.Rank(), i, op)
				}
				outs[g.Rank()] = x
				return ReduceScatterInPlace(g, x, op)
			}))
			for r := range outs {
				got := outs[r][r*m : (r+1)*m]
				if i, ok := equal(got, full[r*m:(r+1)*m]); !ok {
					t.Fatalf("reducescatter in place %v size %d len %d: rank %d element %d = %v, want %v", op, size, m, r, i, got[i], full[r*m+i])
				}
			}
		}
		// Inexact sums: the in-place ring must add in ReduceScatter's order.
		val := func(r, i int) T { return T(float64(r+1)*1.37e-3*float64(i%97) + 1/float64(i%13+3)) }
		plain, inPlace := make([][]T, size), make([][]T, size)
		mustAll(t, "reducescatter", onAll(gs, func(g *Group) error {
			x := make([]T, size*m)
			for i := range x {
				x[i] = val(g.Rank(), i)
			}
			plain[g.Rank()] = make([]T, m)
			if err := ReduceScatter(g, plain[g.Rank()], x, Sum); err != nil {
				return err
			}
			if err := ReduceScatterInPlace(g, x, Sum); err != nil {
				return err
			}
			inPlace[g.Rank()] = x[g.Rank()*m : (g.Rank()+1)*m]
			return nil
		}))
		for r := range plain {
			if i, ok := equal(inPlace[r], plain[r]); !ok {
				t.Fatalf("reducescatter in place size %d len %d: rank %d element %d = %v, ReduceScatter gives %v", size, m, r, i, inPlace[r][i], plain[r][i])
			}
		}

		// all-gather into pieces of 0, 1, 7, m/2+1, ... elements
		cuts := func(total int) [][]T {
			var ps [][]T
			for _, k := range []int{0, 1, 0, 7, m/2 + 1, 0, m + 3} {
				k = min(k, total)
				ps = append(ps, make([]T, k))
				total -= k
			}
			return append(ps, make([]T, total), nil)
		}
		gathered := make([][][]T, size)
		mustAll(t, "allgather into", onAll(gs, func(g *Group) error {
			in := make([]T, m)
			for i := range in {
				in[i] = val(g.Rank(), i)
			}
			gathered[g.Rank()] = cuts(size * m)
			return AllGatherInto(g, gathered[g.Rank()], in)
		}))
		for r := range gathered {
			var flat []T
			for _, p := range gathered[r] {
				flat = append(flat, p...)
			}
			for q := 0; q < size; q++ {
				for i := 0; i < m; i++ {
					if got := flat[q*m+i]; got != val(q, i) {
						t.Fatalf("allgather into size %d len %d: rank %d block %d[%d] = %v, want %v", size, m, r, q, i, got, val(q, i))
					}
				}
			}
		}
	}
	// Bad arguments are errors on every rank, before any message.
	g := gs[0]
	if size > 1 {
		if err := ReduceScatterInPlace(g, make([]T, size+1), Sum); err == nil {
			t.Fatal("ReduceScatterInPlace accepted a length that is not a multiple of the world size")
		}
	}
	if err := AllGatherInto(g, [][]T{make([]T, size)}, make([]T, 2)); err == nil {
		t.Fatal("AllGatherInto accepted pieces of the wrong total length")
	}
}
