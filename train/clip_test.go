package train

import (
	"context"
	"math"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/optim"
)

// TestClipGradNormBoundsEveryStep trains with a tiny norm bound and checks,
// from the optimizer's side, that every step saw gradients whose global norm
// was at most the bound, while an unclipped run exceeds it.
func TestClipGradNormBoundsEveryStep(t *testing.T) {
	trainT, _ := irisSplits(t, 1)
	for _, test := range []struct {
		clip        float64
		wantBounded bool
	}{
		{0.05, true},
		{0, false},
	} {
		m := irisMLP(t, 1, false)
		spy := &normSpy{Optimizer: adam(t, m, 0.01), params: m}
		tr, err := New(Options{
			Model: m, Optimizer: spy, Epochs: 2, ClipGradNorm: test.clip,
			Train: loader(t, trainT, data.LoaderOptions{BatchSize: 16, Shuffle: true, Seed: 1}),
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Fit(context.Background()); err != nil {
			t.Fatal(err)
		}
		if spy.steps == 0 {
			t.Fatal("no optimizer steps")
		}
		bounded := spy.maxNorm <= 0.05*(1+1e-5)
		if bounded != test.wantBounded {
			t.Errorf("clip %g: largest gradient norm seen by the optimizer %g over %d steps; bounded=%v, want %v",
				test.clip, spy.maxNorm, spy.steps, bounded, test.wantBounded)
		}
	}
}

// normSpy records the global gradient norm at every Step.
type normSpy struct {
	optim.Optimizer
	params  nn.Module
	steps   int
	maxNorm float64
}

func (s *normSpy) Step() error {
	n := optim.GradNorm(s.params.Parameters(), 2)
	s.steps++
	s.maxNorm = math.Max(s.maxNorm, n)
	return s.Optimizer.Step()
}
