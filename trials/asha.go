package trials

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
)

// ASHA is asynchronous successive halving (Li et al., "A System for
// Massively Parallel Hyperparameter Tuning", MLSys 2020), in its stopping
// form: rungs sit at MinEpochs·Eta^k epochs (below MaxEpochs); a trial
// that reaches a rung records its metric there and continues only when
// that metric is in the best 1/Eta of all the metrics recorded at the rung
// so far, itself included. No trial waits for others: the first trials
// at a rung always continue (they are the best so far), and the bar rises
// as more arrive. Decisions thus depend on the order in which trials reach
// a rung; the metric a trial reports at an epoch never does.
type ASHA struct {
	MinEpochs, Eta, MaxEpochs int
	// LargerBetter says a larger metric is better (accuracy); else
	// smaller (loss, rmse).
	LargerBetter bool
	// Rungs holds the records; nil is an in-process store.
	Rungs RungStore
}

// RungStore keeps the metrics recorded at each rung. Record appends value
// at rung and returns every value recorded there so far, this one
// included, in the order of recording.
type RungStore interface {
	Record(ctx context.Context, rung int, value float64) ([]float64, error)
}

// Check validates the parameters.
func (a *ASHA) Check() error {
	switch {
	case a.MinEpochs < 1:
		return fmt.Errorf("asha: min epochs %d: want at least 1", a.MinEpochs)
	case a.Eta < 2:
		return fmt.Errorf("asha: eta %d: want at least 2", a.Eta)
	case a.MaxEpochs < 1:
		return fmt.Errorf("asha: max epochs %d: want at least 1", a.MaxEpochs)
	}
	return nil
}

// RungEpochs returns the epochs at which trials are compared: MinEpochs,
// MinEpochs·Eta, ... strictly below MaxEpochs (a trial that reaches
// MaxEpochs is complete).
func (a *ASHA) RungEpochs() []int {
	var out []int
	for r := a.MinEpochs; r < a.MaxEpochs; r *= a.Eta {
		out = append(out, r)
		if r > math.MaxInt/a.Eta {
			break
		}
	}
	return out
}

// Continue records a trial's metric after epoch and says whether the trial
// goes on. Epochs that are not rungs always continue.
func (a *ASHA) Continue(ctx context.Context, epoch int, value float64) (bool, error) {
	rung := slices.Index(a.RungEpochs(), epoch)
	if rung < 0 {
		return true, nil
	}
	if a.Rungs == nil {
		a.Rungs = &MemRungs{}
	}
	if math.IsNaN(value) {
		// Recorded as the worst value, so that it counts in the bar.
		value = math.Inf(1)
		if a.LargerBetter {
			value = math.Inf(-1)
		}
	}
	vals, err := a.Rungs.Record(ctx, rung, value)
	if err != nil {
		return false, err
	}
	return Promote(vals, value, a.Eta, a.LargerBetter), nil
}

// Promote says whether value is in the best 1/eta of vals: at least as
// good as the (1 − 1/eta) quantile of vals (the 1/eta quantile when
// smaller is better), linearly interpolated between order statistics.
func Promote(vals []float64, value float64, eta int, largerBetter bool) bool {
	if math.IsNaN(value) || (largerBetter && math.IsInf(value, -1)) || (!largerBetter && math.IsInf(value, 1)) {
		return false // a trial with no metric goes no further
	}
	s := slices.Clone(vals)
	slices.Sort(s)
	q := 1 - 1/float64(eta)
	if !largerBetter {
		q = 1 / float64(eta)
	}
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(s)-1)
	bar := s[lo] + (pos-float64(lo))*(s[hi]-s[lo])
	if math.IsInf(s[lo], 0) || math.IsInf(s[hi], 0) {
		bar = s[lo]
		if pos-float64(lo) > 0.5 {
			bar = s[hi]
		}
	}
	if largerBetter {
		return value >= bar
	}
	return value <= bar
}

// MemRungs is a RungStore in memory, safe for concurrent use.
type MemRungs struct {
	mu    sync.Mutex
	rungs map[int][]float64
}

// Record implements RungStore.
func (m *MemRungs) Record(_ context.Context, rung int, value float64) ([]float64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rungs == nil {
		m.rungs = map[int][]float64{}
	}
	m.rungs[rung] = append(m.rungs[rung], value)
	return slices.Clone(m.rungs[rung]), nil
}
