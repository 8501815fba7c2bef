package train

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/commtest"
	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ddp"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// detModel has every kind of state deterministic training must keep equal:
// BatchNorm's running statistics and a dropout stream.
func detModel(t *testing.T, seed uint64) *nn.Sequential {
	p := 0.2
	return mlp(t, seed, 4, nn.LayerSpec{Type: "linear", Out: 16}, nn.LayerSpec{Type: "batchnorm1d"},
		nn.LayerSpec{Type: "relu"}, nn.LayerSpec{Type: "dropout", P: &p}, nn.LayerSpec{Type: "linear", Out: 3})
}

// detState returns the model's parameters and buffers, flattened.
func detState(m *nn.Sequential) []float32 {
	var w []float32
	for _, p := range m.Parameters() {
		w = append(w, p.Float32s()...)
	}
	for _, b := range m.NamedBuffers() {
		if b.Tensor.DType().String() == "float32" {
			w = append(w, b.Tensor.Float32s()...)
		}
	}
	return w
}

// TestDeterministicSameBitsOnAnyRanks trains Iris (105 rows, global batch
// 12: the last batch of 9 rows is cut unevenly) for 3 epochs with 4
// micro-shards in one process and on 2 and 4 ranks: the weights and the
// BatchNorm statistics are the same bits everywhere.
func TestDeterministicSameBitsOnAnyRanks(t *testing.T) {
	trainT, _ := irisSplits(t, 1)
	fit := func(s Strategy, seed uint64) ([]float32, error) {
		m := detModel(t, seed)
		tr, err := New(Options{Model: m, Optimizer: adam(t, m, 0.01), Epochs: 3, Strategy: s, MicroShards: 4,
			Train: loader(t, trainT, data.LoaderOptions{BatchSize: 12, Shuffle: true, Seed: 1})})
		if err != nil {
			return nil, err
		}
		_, err = tr.Fit(context.Background())
		return detState(m), err
	}
	want, err := fit(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{2, 4} {
		t.Run(fmt.Sprintf("%dranks", n), func(t *testing.T) {
			gs := commtest.Groups(t, n, comm.TransportAuto, nil)
			ws := make([][]float32, n)
			errs := commtest.OnAll(gs, func(g *comm.Group) error {
				var err error
				// Other ranks start from other weights and dropout seeds:
				// Setup copies rank 0's.
				ws[g.Rank()], err = fit(NewDataParallel(g, ddp.Options{}), uint64(1+g.Rank()))
				return err
			})
			commtest.MustAll(t, "fit", errs)
			for r := range n {
				if i := firstDiff(ws[r], want); i >= 0 {
					t.Errorf("rank %d: value %d is %v, one process trained %v", r, i, ws[r][i], want[i])
				}
			}
		})
	}
}

// Without micro-shards, 2 ranks and one process differ in their last bits
// on the same problem (a plain MLP: no batch statistics, no dropout): the
// order of the sums matters here, so the test above could fail.
func TestPlainDataParallelDiffersInLastBits(t *testing.T) {
	trainT, _ := irisSplits(t, 1)
	fit := func(s Strategy) ([]float32, error) {
		m := irisMLP(t, 1, false)
		tr, err := New(Options{Model: m, Optimizer: adam(t, m, 0.01), Epochs: 3, Strategy: s,
			Train: loader(t, trainT, data.LoaderOptions{BatchSize: 12, Shuffle: true, Seed: 1})})
		if err != nil {
			return nil, err
		}
		_, err = tr.Fit(context.Background())
		return detState(m), err
	}
	one, err := fit(nil)
	if err != nil {
		t.Fatal(err)
	}
	gs := commtest.Groups(t, 2, comm.TransportTCP, nil)
	ws := make([][]float32, 2)
	errs := commtest.OnAll(gs, func(g *comm.Group) error {
		var err error
		ws[g.Rank()], err = fit(NewDataParallel(g, ddp.Options{}))
		return err
	})
	commtest.MustAll(t, "fit", errs)
	if firstDiff(ws[0], one) < 0 {
		t.Fatal("2 ranks without micro-shards trained the same bits as one process: this problem cannot show what micro-shards fix")
	}
}

// A CNN (convolutions through im2col and GEMM, 2-d batch norm, pooling,
// dropout) on 70 random 2×8×8 images, global batch 16 (a last batch of 6):
// the same bits on 1, 2 and 4 ranks.
func TestDeterministicCNN(t *testing.T) {
	rng := tensor.NewRNG(7)
	tab := &data.Table{Rows: 70, Cols: 128, X: make([]float32, 70*128),
		Labels: make([]int64, 70), Classes: []string{"a", "b", "c"}}
	for i := range tab.X {
		tab.X[i] = float32(rng.NormFloat64())
	}
	for i := range tab.Labels {
		tab.Labels[i] = int64(rng.Intn(3))
	}
	p := 0.1
	specs := []nn.LayerSpec{{Type: "conv2d", Out: 4, Kernel: nn.Pair(3), Padding: nn.Pair(1)}, {Type: "batchnorm2d"}, {Type: "relu"},
		{Type: "maxpool2d", Kernel: nn.Pair(2)}, {Type: "flatten"}, {Type: "dropout", P: &p}, {Type: "linear", Out: 3}}
	fit := func(s Strategy, seed uint64) ([]float32, error) {
		m, _, err := nn.Build(specs, []int{2, 8, 8}, tensor.NewRNG(seed))
		if err != nil {
			return nil, err
		}
		ds, err := data.NewDataset(tab, data.DatasetOptions{Shape: []int{2, 8, 8}})
		if err != nil {
			return nil, err
		}
		l, err := data.NewLoader(ds, data.LoaderOptions{BatchSize: 16, Shuffle: true, Seed: 3})
		if err != nil {
			return nil, err
		}
		tr, err := New(Options{Model: m, Optimizer: adam(t, m, 0.01), Epochs: 2, Strategy: s, MicroShards: 4, Train: l})
		if err != nil {
			return nil, err
		}
		_, err = tr.Fit(context.Background())
		return detState(m), err
	}
	want, err := fit(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{2, 4} {
		gs := commtest.Groups(t, n, comm.TransportAuto, nil)
		ws := make([][]float32, n)
		errs := commtest.OnAll(gs, func(g *comm.Group) error {
			var err error
			ws[g.Rank()], err = fit(NewDataParallel(g, ddp.Options{}), 1)
			return err
		})
		commtest.MustAll(t, "fit", errs)
		for r := range n {
			if i := firstDiff(ws[r], want); i >= 0 {
				t.Errorf("%d ranks, rank %d: value %d is %v, one process trained %v", n, r, i, ws[r][i], want[i])
			}
		}
	}
}

func firstDiff(a, b []float32) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

func TestDeterministicRefusesThreeRanks(t *testing.T) {
	trainT, _ := irisSplits(t, 1)
	gs := commtest.Groups(t, 3, comm.TransportTCP, nil)
	errs := commtest.OnAll(gs, func(g *comm.Group) error {
		m := detModel(t, 1)
		tr, err := New(Options{Model: m, Optimizer: adam(t, m, 0.01), Epochs: 1, MicroShards: 4,
			Strategy: NewDataParallel(g, ddp.Options{}),
			Train:    loader(t, trainT, data.LoaderOptions{BatchSize: 12})})
		if err != nil {
			return err
		}
		_, err = tr.Fit(context.Background())
		return err
	})
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "power-of-two number of processes") {
			t.Errorf("rank %d: err = %v", r, err)
		}
	}
}
