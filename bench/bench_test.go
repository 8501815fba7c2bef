package bench

import (
	"strings"
	"testing"
	"time"
)

func TestMatmul(t *testing.T) {
	res, err := Matmul(MatmulOptions{M: 8, N: 16, K: 4, Dtype: "float32", Iters: 3, MinTime: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.M != 8 || res.N != 16 || res.K != 4 || res.Dtype != "f32" || res.Samples != 3 || !(res.Sec > 0) || !(res.GFlops > 0) {
		t.Errorf("result %+v", res)
	}
	for _, o := range []MatmulOptions{
		{M: 0, N: 4, K: 4, Dtype: "f32", Iters: 1},
		{M: 4, N: 4, K: 4, Dtype: "f32", Iters: 0},
		{M: 4, N: 4, K: 4, Dtype: "f16", Iters: 1},
		{M: 4, N: 4, K: 4, Dtype: "int8", TransA: true, Iters: 1},
	} {
		if _, err := Matmul(o); err == nil || !strings.HasPrefix(err.Error(), "bench matmul: ") {
			t.Errorf("%+v: error %v", o, err)
		}
	}
}

func TestElementwise(t *testing.T) {
	for _, b := range ElementwiseOps {
		res, err := b.Run(ElementwiseOptions{N: 2500, Iters: 1, MinTime: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		want := 2500
		if b.Op == "softmax" {
			want = 2000 // whole rows of 1000
		}
		if res.Op != b.Op || res.N != want || res.Samples != 1 || !(res.GBps > 0) {
			t.Errorf("%s: result %+v", b.Op, res)
		}
		if _, err := b.Run(ElementwiseOptions{N: 0, Iters: 1}); err == nil {
			t.Errorf("%s: n 0 accepted", b.Op)
		}
	}
}
