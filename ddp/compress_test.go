package ddp

import (
	"math"
	"slices"
	"testing"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/commtest"
)

// With 16-bit compression every rank still holds the same weights, and
// they stay near one process's (the gradients are rounded to 11 or 8
// significant bits at each reduction step).
func TestCompressionFollowsSingleProcess(t *testing.T) {
	p := newProblem(29, 12)
	want := trainSingle(t, p, 2)
	for _, tc := range []struct {
		c   Compression
		tol float64
	}{{FP16, 2e-4}, {BF16, 3e-3}} { // measured 5.5e-5 and 6.9e-4
		t.Run(tc.c.String(), func(t *testing.T) {
			gs := commtest.Groups(t, 3, comm.TransportTCP, nil)
			got := make([][]float32, 3)
			errs := commtest.OnAll(gs, func(g *comm.Group) error {
				w, err := trainDDP(g, p, 2, Options{FirstBucketMB: 0.0005, BucketCapMB: 0.001, Compression: tc.c})
				got[g.Rank()] = w
				return err
			})
			commtest.MustAll(t, "train", errs)
			for r := range got {
				if !slices.Equal(got[r], got[0]) {
					t.Errorf("rank %d's weights differ from rank 0's", r)
				}
			}
			worst := 0.0
			for i := range want {
				worst = max(worst, math.Abs(float64(got[0][i]-want[i])))
			}
			t.Logf("%v: largest difference from one process %.3g", tc.c, worst)
			if worst > tc.tol || worst == 0 {
				t.Errorf("%v: weights differ from one process's by %g (want in (0, %g])", tc.c, worst, tc.tol)
			}
		})
	}
}

func TestParseCompression(t *testing.T) {
	for _, s := range []string{"", "none", "fp16", "BF16"} {
		c, err := ParseCompression(s)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]string{"": "none", "BF16": "bf16"}[s]; want != "" && c.String() != want {
			t.Errorf("%q -> %v", s, c)
		}
	}
	if _, err := ParseCompression("int8"); err == nil {
		t.Fatal("int8 accepted")
	}
	if got := Compression(7).String(); got != "Compression(7)" {
		t.Errorf("String of an unknown value: %q", got)
	}
}
