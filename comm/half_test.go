package comm

import (
	"fmt"
	"testing"

	"github.com/fathom-ml/fathom/internal/f16"
)

// The 16-bit floats through every all-reduce algorithm and reduce-scatter:
// small integers, exact in both formats whatever the order of the sums,
// so every rank must get exactly the float32 reference; Max is refused.
func TestHalfAllReduce(t *testing.T) {
	val := func(r, i int) float32 { return float32((r*7+i*3)%11 - 5) }
	for _, n := range []int{2, 3, 4} {
		for _, tr := range transports {
			t.Run(fmt.Sprintf("%s/n=%d", tr.name, n), func(t *testing.T) {
				gs := newGroups(t, n, tr.tr, nil)
				for _, algo := range algos {
					for _, m := range []int{0, 1, 7, 1000, 4099} {
						checkHalf(t, gs, algo, m, val, "bf16", func(v float32) BFloat16 { return BFloat16(f16.FromFloat32BF16(v)) },
							func(h BFloat16) float32 { return f16.ToFloat32BF16(uint16(h)) })
						checkHalf(t, gs, algo, m, val, "fp16", func(v float32) Float16 { return Float16(f16.FromFloat32FP16(v)) },
							func(h Float16) float32 { return f16.ToFloat32FP16(uint16(h)) })
					}
				}
				errs := onAll(gs, func(g *Group) error { return AllReduce(g, make([]BFloat16, 4), Max) })
				for r, err := range errs {
					if err == nil {
						t.Fatalf("rank %d: Max of bfloat16 accepted", r)
					}
				}
			})
		}
	}
}

func checkHalf[H BFloat16 | Float16](t *testing.T, gs []*Group, algo Algorithm, m int, val func(r, i int) float32, name string,
	enc func(float32) H, dec func(H) float32) {
	t.Helper()
	bufs := make([][]H, len(gs))
	mustAll(t, "allreduce "+name, onAll(gs, func(g *Group) error {
		x := make([]H, m)
		for i := range x {
			x[i] = enc(val(g.Rank(), i))
		}
		bufs[g.Rank()] = x
		return AllReduceWith(g, x, Sum, algo)
	}))
	for i := range m {
		want := float32(0)
		for r := range gs {
			want += val(r, i)
		}
		for r := range gs {
			if got := dec(bufs[r][i]); got != want {
				t.Fatalf("%s %v size %d len %d: rank %d element %d = %v, want %v", name, algo, len(gs), m, r, i, got, want)
			}
		}
	}
}
