package pipe

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/commtest"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/tensor"
)

func opsString(ops []Op) string {
	s := make([]string, len(ops))
	for i, o := range ops {
		s[i] = o.String()
	}
	return strings.Join(s, " ")
}

func TestOps(t *testing.T) {
	for _, test := range []struct {
		sched              Schedule
		stages, micro, stg int
		want               string
	}{
		{GPipe, 3, 4, 0, "F0 F1 F2 F3 B3 B2 B1 B0"},
		{GPipe, 3, 1, 2, "F0 B0"},
		{OneFOneB, 3, 4, 0, "F0 F1 F2 B0 F3 B1 B2 B3"},
		{OneFOneB, 3, 4, 1, "F0 F1 B0 F2 B1 F3 B2 B3"},
		{OneFOneB, 3, 4, 2, "F0 B0 F1 B1 F2 B2 F3 B3"},
		{OneFOneB, 4, 2, 0, "F0 F1 B0 B1"},
	} {
		if got := opsString(Ops(test.sched, test.stages, test.micro, test.stg)); got != test.want {
			t.Errorf("%v, %d stages, %d micro-batches, stage %d: %s, want %s", test.sched, test.stages, test.micro, test.stg, got, test.want)
		}
	}
}

// TestSimulate: with equal pass times both schedules idle (K−1)/(M+K−1)
// of the step; GPipe holds M micro-batches' activations on every stage,
// 1F1B min(K−s, M) on stage s.
func TestSimulate(t *testing.T) {
	for _, sched := range []Schedule{GPipe, OneFOneB} {
		for K := 1; K <= 4; K++ {
			for _, M := range []int{1, 2, 4, 8, 16} {
				for _, bwd := range []float64{1, 2} {
					tl, err := Simulate(sched, K, M, 1, bwd)
					if err != nil {
						t.Fatal(err)
					}
					if got, want := tl.Bubble(), IdealBubble(K, M); math.Abs(got-want) > 1e-12 {
						t.Errorf("%v K=%d M=%d bwd=%g: bubble %g, want %g", sched, K, M, bwd, got, want)
					}
					for s, p := range tl.PeakLive {
						want := M
						if sched == OneFOneB {
							want = min(K-s, M)
						}
						if p != want {
							t.Errorf("%v K=%d M=%d: stage %d holds %d micro-batches at once, want %d", sched, K, M, s, p, want)
						}
					}
				}
			}
		}
	}
}

func TestBalance(t *testing.T) {
	for _, test := range []struct {
		costs  []float64
		stages int
		want   []int
	}{
		{[]float64{1, 1, 1, 1}, 2, []int{0, 2, 4}},
		{[]float64{5, 1, 1, 1, 1, 1}, 2, []int{0, 1, 6}},
		{[]float64{1, 2, 3, 4, 5}, 3, []int{0, 3, 4, 5}},
		{[]float64{7}, 1, []int{0, 1}},
	} {
		got, err := Balance(test.costs, test.stages)
		if err != nil || !slices.Equal(got, test.want) {
			t.Errorf("Balance(%v, %d) = %v, %v; want %v", test.costs, test.stages, got, err, test.want)
		}
	}
	// Against brute force: the costliest stage is as cheap as any cut's.
	rng := tensor.NewRNG(3)
	for range 50 {
		n := 2 + int(rng.Uint64()%6)
		costs := make([]float64, n)
		for i := range costs {
			costs[i] = float64(1 + rng.Uint64()%9)
		}
		cut, err := Balance(costs, 2)
		if err != nil {
			t.Fatal(err)
		}
		worst := func(c int) float64 {
			a, b := 0.0, 0.0
			for i, x := range costs {
				if i < c {
					a += x
				} else {
					b += x
				}
			}
			return max(a, b)
		}
		best := math.Inf(1)
		for c := 1; c < n; c++ {
			best = min(best, worst(c))
		}
		if worst(cut[1]) != best {
			t.Fatalf("Balance(%v, 2) = %v: costliest stage %g, best %g", costs, cut, worst(cut[1]), best)
		}
	}
	if _, err := Balance([]float64{1}, 2); err == nil {
		t.Error("2 stages of 1 layer: no error")
	}
	if _, err := CutsAt(4, []int{2, 2}); err == nil {
		t.Error("repeated split point: no error")
	}
}

// model is a small MLP, the same weights for the same seed.
func model(seed uint64) []nn.Layer {
	rng := tensor.NewRNG(seed)
	return []nn.Layer{nn.NewLinear(rng, 6, 16), nn.NewReLU(), nn.NewLinear(rng, 16, 8), nn.NewReLU(), nn.NewLinear(rng, 8, 3)}
}

func batch(rows int) (*tensor.Tensor, *tensor.Tensor) {
	rng := tensor.NewRNG(11)
	x := rng.Normal(tensor.Float32, 0, 1, rows, 6)
	labels := make([]int64, rows)
	for i := range labels {
		labels[i] = int64(rng.Uint64() % 3)
	}
	return x, tensor.FromInt64(labels, rows)
}

const steps = 3

// onePipe trains the model in one process on full batches.
func oneProcess(t *testing.T, rows int) []*tensor.Tensor {
	layers := model(1)
	net := nn.NewSequential(layers...)
	opt, err := optim.NewSGD(net.Parameters(), optim.SGDOptions{LR: 0.2, Momentum: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	x, y := batch(rows)
	for range steps {
		opt.ZeroGrad()
		out := x
		for _, l := range layers {
			out = l.Forward(out)
		}
		nn.CrossEntropyLoss(out, y, nn.ClassOptions{}).Backward()
		if err := opt.Step(); err != nil {
			t.Fatal(err)
		}
	}
	return net.Parameters()
}

// TestMatchesOneProcess: K stages over loopback TCP, either schedule, any
// number of micro-batches, train the weights one process trains with the
// same batch, up to float32 rounding of the micro-batch sums (the
// gradient of a batch is summed in another order: relative 1e-5).
func TestMatchesOneProcess(t *testing.T) {
	const rows = 12
	want := oneProcess(t, rows)
	for _, test := range []struct {
		stages int
		split  []int
		sched  Schedule
		micro  int
	}{
		{2, []int{2}, GPipe, 1},
		{2, []int{2}, GPipe, 4},
		{2, []int{4}, OneFOneB, 3},
		{3, []int{1, 3}, OneFOneB, 4},
		{3, []int{2, 4}, GPipe, 12},
	} {
		t.Run(fmt.Sprintf("K%d-%v-M%d", test.stages, test.sched, test.micro), func(t *testing.T) {
			gs := commtest.Groups(t, test.stages, comm.TransportTCP, nil)
			cut, err := CutsAt(5, test.split)
			if err != nil {
				t.Fatal(err)
			}
			got := make([][]*tensor.Tensor, test.stages)
			commtest.MustAll(t, "pipeline", commtest.OnAll(gs, func(g *comm.Group) error {
				s := g.Rank()
				layers := model(1)[cut[s]:cut[s+1]]
				st, err := NewStage(g, layers, test.sched, test.micro)
				if err != nil {
					return err
				}
				opt, err := optim.NewSGD(st.Parameters(), optim.SGDOptions{LR: 0.2, Momentum: 0.9})
				if err != nil {
					return err
				}
				x, y := batch(rows)
				if s != 0 {
					x = nil
				}
				loss := func(out *tensor.Tensor, lo, hi int) *tensor.Tensor {
					return nn.CrossEntropyLoss(out, y.Narrow(0, lo, hi-lo), nn.ClassOptions{})
				}
				for range steps {
					opt.ZeroGrad()
					if _, err := st.Step(x, rows, loss); err != nil {
						return err
					}
					if err := opt.Step(); err != nil {
						return err
					}
				}
				got[s] = st.Parameters()
				return nil
			}))
			var flat []*tensor.Tensor
			for _, g := range got {
				flat = append(flat, g...)
			}
			if len(flat) != len(want) {
				t.Fatalf("%d parameters over the stages, want %d", len(flat), len(want))
			}
			for i, p := range flat {
				a, b := p.Float32s(), want[i].Float32s()
				for j := range a {
					if d := math.Abs(float64(a[j] - b[j])); d > 1e-5*math.Max(1, math.Abs(float64(b[j]))) {
						t.Fatalf("parameter %d[%d] = %g, one process %g", i, j, a[j], b[j])
					}
				}
			}
		})
	}
}

// TestActivationMemory: on the first stage of 4, GPipe holds the
// activations of all M micro-batches at once, 1F1B of 4.
func TestActivationMemory(t *testing.T) {
	const K, M, rows = 4, 8, 16
	peak := map[Schedule]int64{}
	for _, sched := range []Schedule{GPipe, OneFOneB} {
		gs := commtest.Groups(t, K, comm.TransportTCP, nil)
		cut := []int{0, 1, 2, 4, 5}
		commtest.MustAll(t, "pipeline", commtest.OnAll(gs, func(g *comm.Group) error {
			s := g.Rank()
			st, err := NewStage(g, model(1)[cut[s]:cut[s+1]], sched, M)
			if err != nil {
				return err
			}
			x, y := batch(rows)
			loss := func(out *tensor.Tensor, lo, hi int) *tensor.Tensor {
				return nn.CrossEntropyLoss(out, y.Narrow(0, lo, hi-lo), nn.ClassOptions{})
			}
			if _, err := st.Step(x, rows, loss); err != nil {
				return err
			}
			if s == 0 {
				peak[sched] = st.Stats().PeakActivationBytes
			}
			return nil
		}))
	}
	// Stage 0 (Linear 6→16) keeps 16 floats per row: 2 rows per micro-batch.
	per := int64(2 * 16 * 4)
	if peak[GPipe] != M*per || peak[OneFOneB] != K*per {
		t.Fatalf("stage 0's peak activation bytes: GPipe %d, 1F1B %d; want %d and %d", peak[GPipe], peak[OneFOneB], M*per, K*per)
	}
}
