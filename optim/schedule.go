package optim

import (
	"fmt"
	"math"
	"slices"
)

// Learning-rate schedules, after torch.optim.lr_scheduler. A schedule
// wraps an optimizer (anything with per-group learning rates), remembers
// each group's learning rate at construction as its base, and on every
// Step advances its counter (an epoch or an iteration, as the caller
// decides) and sets each group's rate from the closed form of the
// schedule. Construction sets the rates of step 0, as PyTorch does.
//
// The closed forms equal PyTorch's recursive ones up to rounding, but do
// not compose: two schedules on one optimizer overwrite each other.

// Schedule is a learning-rate schedule driven by a step counter.
type Schedule struct {
	kind string
	opt  LRController
	base []float64
	last int
	lrAt func(base float64, step int) float64
}

// SchedulerState is a schedule's state for checkpoints (JSON-friendly).
type SchedulerState struct {
	Kind      string             `json:"kind"`
	LastEpoch int                `json:"last_epoch"`
	BaseLRs   []float64          `json:"base_lrs"`
	Extra     map[string]float64 `json:"extra,omitempty"`
}

func newSchedule(kind string, opt LRController, lrAt func(base float64, step int) float64) *Schedule {
	s := &Schedule{kind: kind, opt: opt, lrAt: lrAt}
	for i := range opt.NumGroups() {
		s.base = append(s.base, opt.LR(i))
	}
	s.apply()
	return s
}

func (s *Schedule) apply() {
	for i, b := range s.base {
		s.opt.SetLR(i, s.lrAt(b, s.last))
	}
}

// Step advances the schedule by one epoch (or iteration) and sets the
// optimizer's learning rates.
func (s *Schedule) Step() {
	s.last++
	s.apply()
}

// Seek moves the schedule to step n (n ≥ 0) and sets the optimizer's
// learning rates for it: a loop that knows its epoch, such as one resumed
// from a checkpoint, needs no schedule state of its own.
func (s *Schedule) Seek(n int) {
	s.last = max(n, 0)
	s.apply()
}

// Epoch returns the number of Step calls so far (PyTorch's last_epoch).
func (s *Schedule) Epoch() int { return s.last }

// LastLR returns the learning rates the schedule set last, per group.
func (s *Schedule) LastLR() []float64 {
	out := make([]float64, len(s.base))
	for i, b := range s.base {
		out[i] = s.lrAt(b, s.last)
	}
	return out
}

// LRAt returns the learning rate the schedule gives group g at step n.
func (s *Schedule) LRAt(g, n int) float64 { return s.lrAt(s.base[g], n) }

// State returns the schedule's position and base rates.
func (s *Schedule) State() SchedulerState {
	return SchedulerState{Kind: s.kind, LastEpoch: s.last, BaseLRs: slices.Clone(s.base)}
}

// LoadState restores a state saved by State of the same kind of schedule
// and sets the optimizer's learning rates to match.
func (s *Schedule) LoadState(st SchedulerState) error {
	if st.Kind != s.kind {
		return fmt.Errorf("optim: %s: LoadState with the state of a %s schedule", s.kind, st.Kind)
	}
	if len(st.BaseLRs) != len(s.base) || st.LastEpoch < 0 {
		return fmt.Errorf("optim: %s: LoadState: state has %d base rates at epoch %d, optimizer has %d groups",
			s.kind, len(st.BaseLRs), st.LastEpoch, len(s.base))
	}
	s.base = slices.Clone(st.BaseLRs)
	s.last = st.LastEpoch
	s.apply()
	return nil
}

// NewStepLR multiplies the learning rate by gamma every stepSize steps:
// lr = base·gamma^⌊n/stepSize⌋ (torch.optim.lr_scheduler.StepLR).
func NewStepLR(opt LRController, stepSize int, gamma float64) (*Schedule, error) {
	if stepSize < 1 || !(gamma > 0) {
		return nil, fmt.Errorf("optim: StepLR: invalid step size %d or gamma %g", stepSize, gamma)
	}
	return newSchedule("StepLR", opt, func(b float64, n int) float64 {
		return b * math.Pow(gamma, float64(n/stepSize))
	}), nil
}

// NewMultiStepLR multiplies the learning rate by gamma at each milestone:
// lr = base·gamma^(number of milestones ≤ n) (MultiStepLR; a milestone
// listed twice counts twice).
func NewMultiStepLR(opt LRController, milestones []int, gamma float64) (*Schedule, error) {
	if !(gamma > 0) {
		return nil, fmt.Errorf("optim: MultiStepLR: invalid gamma %g", gamma)
	}
	ms := slices.Clone(milestones)
	slices.Sort(ms)
	return newSchedule("MultiStepLR", opt, func(b float64, n int) float64 {
		k := 0
		for _, m := range ms {
			if m <= n {
				k++
			}
		}
		return b * math.Pow(gamma, float64(k))
	}), nil
}

// NewExponentialLR decays the learning rate by gamma every step:
// lr = base·gamma^n (ExponentialLR).
func NewExponentialLR(opt LRController, gamma float64) (*Schedule, error) {
	if !(gamma > 0) {
		return nil, fmt.Errorf("optim: ExponentialLR: invalid gamma %g", gamma)
	}
	return newSchedule("ExponentialLR", opt, func(b float64, n int) float64 {
		return b * math.Pow(gamma, float64(n))
	}), nil
}

// NewCosineAnnealingLR anneals the learning rate from base to etaMin over
// tMax steps along a half cosine (Loshchilov & Hutter, "SGDR: Stochastic
// Gradient Descent with Warm Restarts", ICLR 2017, eq. 5, without
// restarts): lr = etaMin + (base−etaMin)·(1+cos(π·n/tMax))/2. Past tMax
// the rate rises again along the cosine, as PyTorch's CosineAnnealingLR.
func NewCosineAnnealingLR(opt LRController, tMax int, etaMin float64) (*Schedule, error) {
	if tMax < 1 || etaMin < 0 {
		return nil, fmt.Errorf("optim: CosineAnnealingLR: invalid T_max %d or eta_min %g", tMax, etaMin)
	}
	return newSchedule("CosineAnnealingLR", opt, func(b float64, n int) float64 {
		return etaMin + (b-etaMin)*(1+math.Cos(math.Pi*float64(n)/float64(tMax)))/2
	}), nil
}

// NewCosineWithWarmup is the per-iteration schedule of transformer
// training (transformers' get_cosine_schedule_with_warmup, with a floor):
// a linear warm-up from 0 to base over warmup steps, then a half cosine
// from base down to minLR at step total, and minLR after that:
//
//	lr = base·n/warmup                                  for n < warmup
//	lr = minLR + (base−minLR)·(1+cos(π·p))/2,  p = min(1, (n−warmup)/(total−warmup))
//
// Call Step after every optimizer step.
func NewCosineWithWarmup(opt LRController, warmup, total int, minLR float64) (*Schedule, error) {
	if warmup < 0 || total <= warmup || minLR < 0 {
		return nil, fmt.Errorf("optim: CosineWithWarmup: need 0 ≤ warmup < total and minLR ≥ 0, got %d, %d, %g", warmup, total, minLR)
	}
	return newSchedule("CosineWithWarmup", opt, func(b float64, n int) float64 {
		if n < warmup {
			return b * float64(n) / float64(warmup)
		}
		p := min(1, float64(n-warmup)/float64(total-warmup))
		return minLR + (b-minLR)*(1+math.Cos(math.Pi*p))/2
	}), nil
}

// NewLambdaLR sets lr = base·factor(n) (LambdaLR). The function is not part
// of the saved state: a restored schedule needs the same function.
func NewLambdaLR(opt LRController, factor func(step int) float64) (*Schedule, error) {
	if factor == nil {
		return nil, fmt.Errorf("optim: LambdaLR: nil factor function")
	}
	return newSchedule("LambdaLR", opt, func(b float64, n int) float64 { return b * factor(n) }), nil
}

// PlateauOptions configure ReduceLROnPlateau (the arguments of
// torch.optim.lr_scheduler.ReduceLROnPlateau; DefaultPlateau returns its
// defaults). Fields are used as given.
type PlateauOptions struct {
	Max          bool    // the metric should increase (accuracy); default: decrease (loss)
	Factor       float64 // new lr = lr·Factor, in (0, 1)
	Patience     int     // epochs without improvement tolerated before a reduction
	Threshold    float64 // least change that counts as an improvement
	AbsThreshold bool    // Threshold is absolute; default: relative to the best value
	Cooldown     int     // epochs to wait after a reduction before counting again
	MinLR        float64 // floor for every group
	MinLRs       []float64
	Eps          float64 // reductions smaller than Eps are skipped
}

// DefaultPlateau returns PyTorch's defaults: mode min, factor 0.1,
// patience 10, threshold 1e-4 relative, cooldown 0, min_lr 0, eps 1e-8.
func DefaultPlateau() PlateauOptions {
	return PlateauOptions{Factor: 0.1, Patience: 10, Threshold: 1e-4, Eps: 1e-8}
}

// ReduceLROnPlateau lowers the learning rate when a metric has stopped
// improving for Patience epochs (torch.optim.lr_scheduler.ReduceLROnPlateau).
type ReduceLROnPlateau struct {
	opt      LRController
	o        PlateauOptions
	minLRs   []float64
	best     float64
	bad      int // epochs since the last improvement
	cooldown int // epochs of cooldown left
	last     int
}

// NewReduceLROnPlateau wraps opt.
func NewReduceLROnPlateau(opt LRController, o PlateauOptions) (*ReduceLROnPlateau, error) {
	if !(o.Factor > 0 && o.Factor < 1) || o.Patience < 0 || o.Cooldown < 0 || o.Threshold < 0 || o.Eps < 0 || o.MinLR < 0 {
		return nil, fmt.Errorf("optim: ReduceLROnPlateau: invalid options %+v", o)
	}
	s := &ReduceLROnPlateau{opt: opt, o: o}
	for i := range opt.NumGroups() {
		m := o.MinLR
		if o.MinLRs != nil {
			if len(o.MinLRs) != opt.NumGroups() {
				return nil, fmt.Errorf("optim: ReduceLROnPlateau: %d MinLRs for %d groups", len(o.MinLRs), opt.NumGroups())
			}
			m = o.MinLRs[i]
		}
		s.minLRs = append(s.minLRs, m)
	}
	s.best = s.worst()
	return s, nil
}

func (s *ReduceLROnPlateau) worst() float64 {
	if s.o.Max {
		return math.Inf(-1)
	}
	return math.Inf(1)
}

// better reports whether a improves on best by more than the threshold.
func (s *ReduceLROnPlateau) better(a, best float64) bool {
	switch {
	case !s.o.Max && !s.o.AbsThreshold:
		return a < best*(1-s.o.Threshold)
	case !s.o.Max:
		return a < best-s.o.Threshold
	case !s.o.AbsThreshold:
		return a > best*(1+s.o.Threshold)
	default:
		return a > best+s.o.Threshold
	}
}

// Step records the metric of an epoch and reduces the learning rates if
// it has not improved for more than Patience epochs. A NaN metric counts
// as no improvement.
func (s *ReduceLROnPlateau) Step(metric float64) {
	s.last++
	if s.better(metric, s.best) {
		s.best, s.bad = metric, 0
	} else {
		s.bad++
	}
	if s.cooldown > 0 {
		s.cooldown--
		s.bad = 0
	}
	if s.bad > s.o.Patience {
		for i := range s.opt.NumGroups() {
			old := s.opt.LR(i)
			lr := max(old*s.o.Factor, s.minLRs[i])
			if old-lr > s.o.Eps {
				s.opt.SetLR(i, lr)
			}
		}
		s.cooldown, s.bad = s.o.Cooldown, 0
	}
}

// Best returns the best metric seen so far.
func (s *ReduceLROnPlateau) Best() float64 { return s.best }

// State returns the scheduler's counters. An infinite best value (no
// metric yet) is left out, as JSON cannot hold it.
func (s *ReduceLROnPlateau) State() SchedulerState {
	st := SchedulerState{Kind: "ReduceLROnPlateau", LastEpoch: s.last, Extra: map[string]float64{
		"num_bad_epochs": float64(s.bad), "cooldown_counter": float64(s.cooldown),
	}}
	if finite(s.best) {
		st.Extra["best"] = s.best
	}
	return st
}

// LoadState restores a state saved by State. The learning rates themselves
// are part of the optimizer's state.
func (s *ReduceLROnPlateau) LoadState(st SchedulerState) error {
	if st.Kind != "ReduceLROnPlateau" {
		return fmt.Errorf("optim: ReduceLROnPlateau: LoadState with the state of a %s schedule", st.Kind)
	}
	s.last = st.LastEpoch
	s.bad = int(st.Extra["num_bad_epochs"])
	s.cooldown = int(st.Extra["cooldown_counter"])
	s.best = s.worst()
	if b, ok := st.Extra["best"]; ok {
		s.best = b
	}
	return nil
}
