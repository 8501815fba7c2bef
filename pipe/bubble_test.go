package pipe

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/commtest"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

var bubbleOut = flag.String("pipe.bubble", "", "measure the bubble fraction and peak activation memory of both schedules for M = 1..16 and write the CSV here (e.g. testdata/results/bubble.csv)")

// TestMeasureBubble measures, for K = 2 and 4 stages of equal cost over
// loopback TCP, each schedule's bubble (1 − compute time / step time,
// averaged over the stages; median of 15 steps) and peak activation
// memory per stage, for M = 1, 2, 4, 8, 16. Only with -pipe.bubble: it is
// a measurement, not a test.
func TestMeasureBubble(t *testing.T) {
	if *bubbleOut == "" {
		t.Skip("a measurement: run with -pipe.bubble=FILE")
	}
	const width, rows, steps = 384, 512, 15
	var b strings.Builder
	b.WriteString("schedule,stages,micro,measured_bubble,ideal_bubble,peak_activation_bytes_by_stage\n")
	for _, K := range []int{2, 4} {
		for _, sched := range []Schedule{GPipe, OneFOneB} {
			for _, M := range []int{1, 2, 4, 8, 16} {
				gs := commtest.Groups(t, K, comm.TransportTCP, nil)
				bubbles := make([][]float64, K)
				peaks := make([]int64, K)
				commtest.MustAll(t, "pipeline", commtest.OnAll(gs, func(g *comm.Group) error {
					s := g.Rank()
					rng := tensor.NewRNG(uint64(s + 1))
					layers := []nn.Layer{nn.NewLinear(rng, width, width), nn.NewReLU(), nn.NewLinear(rng, width, width), nn.NewReLU()}
					st, err := NewStage(g, layers, sched, M)
					if err != nil {
						return err
					}
					x := tensor.NewRNG(9).Normal(tensor.Float32, 0, 1, rows, width)
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
				line := fmt.Sprintf("%v,%d,%d,%.4f,%.4f,%s\n", sched, K, M, per[steps/2], IdealBubble(K, M), strings.Join(ps, " "))
				t.Log(strings.TrimSpace(line))
				b.WriteString(line)
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
