package pipe

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/commtest"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

var bubbleOut = flag.String("pipe.bubble", "", "measure the bubble fraction and peak activation memory of both schedules for M = 1..16 and write the CSV here (e.g. testdata/results/bubble.csv)")

// sleeper is a layer whose forward pass takes fwd and backward pass bwd
// of wall time without using a core: a stage of known, equal cost that the
// machine's other work cannot slow down.
type sleeper struct {
	nn.Base
	fwd, bwd time.Duration
	w        *tensor.Tensor // makes the pass record on stage 0 too
}

func newSleeper(fwd, bwd time.Duration) *sleeper {
	return &sleeper{fwd: fwd, bwd: bwd, w: tensor.Zeros(tensor.Float32, 1).SetRequiresGrad(true)}
}

func (l *sleeper) Forward(x *tensor.Tensor) *tensor.Tensor {
	time.Sleep(l.fwd)
	out := x.Detach().Clone()
	return tensor.CustomOp("Sleep", out, func(g *tensor.Tensor) []*tensor.Tensor {
		time.Sleep(l.bwd)
		return []*tensor.Tensor{g.Clone(), nil}
	}, x, l.w)
}

// TestMeasureBubble measures, for K = 2 and 4 stages of equal cost over
// loopback TCP, each schedule's bubble (1 − compute time / step time,
// averaged over the stages; median of the steps) and peak activation
// memory per stage, for M = 1, 2, 4, 8, 16, with two kinds of passes:
// "sleep", where every stage's batch takes 32 ms forward and 64 ms
// backward of wall time split evenly over the micro-batches without using
// a core (the schedule and the transport alone, whatever else the
// machine runs), and "compute", two 384-wide linear layers per stage on
// 512 rows (the real thing, at the mercy of the 2 shared cores). Only
// with -pipe.bubble: it is a measurement, not a test.
func TestMeasureBubble(t *testing.T) {
	if *bubbleOut == "" {
		t.Skip("a measurement: run with -pipe.bubble=FILE")
	}
	const width, rows = 384, 512
	var b strings.Builder
	b.WriteString("passes,schedule,stages,micro,measured_bubble,ideal_bubble,peak_activation_bytes_by_stage\n")
	for _, passes := range []string{"sleep", "compute"} {
		for _, K := range []int{2, 4} {
			for _, sched := range []Schedule{GPipe, OneFOneB} {
				for _, M := range []int{1, 2, 4, 8, 16} {
					steps := 9
					if passes == "compute" {
						steps = 15
					}
					gs := commtest.Groups(t, K, comm.TransportTCP, nil)
					bubbles := make([][]float64, K)
					peaks := make([]int64, K)
					commtest.MustAll(t, "pipeline", commtest.OnAll(gs, func(g *comm.Group) error {
						s := g.Rank()
						rng := tensor.NewRNG(uint64(s + 1))
						layers := []nn.Layer{nn.NewLinear(rng, width, width), nn.NewReLU(), nn.NewLinear(rng, width, width), nn.NewReLU()}
						x := tensor.NewRNG(9).Normal(tensor.Float32, 0, 1, rows, width)
						if passes == "sleep" {
							per := time.Millisecond * time.Duration(32) / time.Duration(M)
							layers = []nn.Layer{newSleeper(per, 2*per)}
							x = tensor.NewRNG(9).Normal(tensor.Float32, 0, 1, rows, 8)
						}
						st, err := NewStage(g, layers, sched, M)
						if err != nil {
							return err
						}
						loss := func(out *tensor.Tensor, lo, hi int) *tensor.Tensor { return out.MeanAll() }
						for i := range steps + 2 {
							if _, err := st.Step(x, rows, loss); err != nil {
								return err
							}
							if i >= 2 {
								bubbles[s] = append(bubbles[s], st.Stats().Bubble())
							}
							peaks[s] = max(peaks[s], st.Stats().PeakActivationBytes)
						}
						return nil
					}))
					// Each step's bubble averaged over the stages, then the median step.
					per := make([]float64, steps)
					for i := range per {
						for s := range K {
							per[i] += bubbles[s][i] / float64(K)
						}
					}
					slices.Sort(per)
					ps := make([]string, K)
					for s, p := range peaks {
						ps[s] = fmt.Sprint(p)
					}
					line := fmt.Sprintf("%s,%v,%d,%d,%.4f,%.4f,%s\n", passes, sched, K, M, per[steps/2], IdealBubble(K, M), strings.Join(ps, " "))
					t.Log(strings.TrimSpace(line))
					b.WriteString(line)
				}
			}
		}
	}
	if err := os.MkdirAll(filepath.Dir(*bubbleOut), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(*bubbleOut, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
