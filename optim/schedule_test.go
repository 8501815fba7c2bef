package optim

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"
)

// lrHolder is a bare LRController with two groups.
type lrHolder struct{ lr []float64 }

func (h *lrHolder) NumGroups() int          { return len(h.lr) }
func (h *lrHolder) LR(i int) float64        { return h.lr[i] }
func (h *lrHolder) SetLR(i int, lr float64) { h.lr[i] = lr }

func intsOf(v any) []int {
	var out []int
	for _, x := range v.([]any) {
		out = append(out, int(x.(float64)))
	}
	return out
}

// TestSchedulesMatchTorch replays the learning rates PyTorch's schedulers
// set (testdata/gen_torch.py), over two groups with different base rates.
func TestSchedulesMatchTorch(t *testing.T) {
	ref := loadTorchReference(t)
	if len(ref.Schedulers) == 0 {
		t.Fatal("no scheduler cases")
	}
	for ci, c := range ref.Schedulers {
		t.Run(fmt.Sprintf("%d-%s", ci, c.Kind), func(t *testing.T) {
			h := &lrHolder{lr: []float64{0.1, 0.02}}
			var step func(e int)
			o := c.Opts
			var s *Schedule
			var err error
			switch c.Kind {
			case "step":
				s, err = NewStepLR(h, int(optF(o, "step_size")), optF(o, "gamma"))
			case "multistep":
				s, err = NewMultiStepLR(h, intsOf(o["milestones"]), optF(o, "gamma"))
			case "exponential":
				s, err = NewExponentialLR(h, optF(o, "gamma"))
			case "cosine":
				s, err = NewCosineAnnealingLR(h, int(optF(o, "t_max")), optF(o, "eta_min"))
			case "plateau":
				po := PlateauOptions{Max: o["mode"] == "max", Factor: optF(o, "factor"), Patience: int(optF(o, "patience")),
					Threshold: optF(o, "threshold"), AbsThreshold: o["threshold_mode"] == "abs",
					Cooldown: int(optF(o, "cooldown")), Eps: 1e-8}
				for _, m := range o["min_lr"].([]any) {
					po.MinLRs = append(po.MinLRs, m.(float64))
				}
				p, perr := NewReduceLROnPlateau(h, po)
				if perr != nil {
					t.Fatal(perr)
				}
				step = func(e int) { p.Step(c.Metrics[e]) }
			default:
				t.Fatalf("unknown kind %q", c.Kind)
			}
			if err != nil {
				t.Fatal(err)
			}
			if s != nil {
				step = func(int) { s.Step() }
			}
			for e, want := range c.LRs {
				if e > 0 {
					step(e - 1)
				}
				for g := range want {
					if math.Abs(h.lr[g]-want[g]) > 1e-12*want[g]+1e-15 {
						t.Fatalf("epoch %d group %d: lr %.17g, PyTorch %.17g", e, g, h.lr[g], want[g])
					}
				}
			}
		})
	}
}

// TestScheduleClosedForms checks every schedule against its formula over
// many steps, and a restore in the middle.
func TestScheduleClosedForms(t *testing.T) {
	const base = 0.3
	for _, c := range []struct {
		name string
		make func(LRController) (*Schedule, error)
		want func(n int) float64
	}{
		{"StepLR", func(o LRController) (*Schedule, error) { return NewStepLR(o, 7, 0.3) },
			func(n int) float64 { return base * math.Pow(0.3, float64(n/7)) }},
		{"MultiStepLR", func(o LRController) (*Schedule, error) { return NewMultiStepLR(o, []int{50, 10, 30, 30}, 0.5) },
			func(n int) float64 {
				k := 0
				for _, m := range []int{10, 30, 30, 50} {
					if n >= m {
						k++
					}
				}
				return base * math.Pow(0.5, float64(k))
			}},
		{"ExponentialLR", func(o LRController) (*Schedule, error) { return NewExponentialLR(o, 0.97) },
			func(n int) float64 { return base * math.Pow(0.97, float64(n)) }},
		{"CosineAnnealingLR", func(o LRController) (*Schedule, error) { return NewCosineAnnealingLR(o, 40, 0.01) },
			func(n int) float64 { return 0.01 + (base-0.01)*(1+math.Cos(math.Pi*float64(n)/40))/2 }},
		{"CosineWithWarmup", func(o LRController) (*Schedule, error) { return NewCosineWithWarmup(o, 10, 100, 0.001) },
			func(n int) float64 {
				if n < 10 {
					return base * float64(n) / 10
				}
				if n >= 100 {
					return 0.001
				}
				return 0.001 + (base-0.001)*0.5*(1+math.Cos(math.Pi*float64(n-10)/90))
			}},
		{"LambdaLR", func(o LRController) (*Schedule, error) {
			return NewLambdaLR(o, func(n int) float64 { return 1 / math.Sqrt(float64(n+1)) })
		}, func(n int) float64 { return base / math.Sqrt(float64(n+1)) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := &lrHolder{lr: []float64{base}}
			s, err := c.make(h)
			if err != nil {
				t.Fatal(err)
			}
			var saved SchedulerState
			for n := 0; n <= 200; n++ {
				if n > 0 {
					s.Step()
				}
				if got, want := h.lr[0], c.want(n); math.Abs(got-want) > 1e-14 {
					t.Fatalf("step %d: lr %.17g, closed form %.17g", n, got, want)
				}
				if n == 77 {
					b, _ := json.Marshal(s.State())
					if err := json.Unmarshal(b, &saved); err != nil {
						t.Fatal(err)
					}
				}
			}
			// A fresh schedule over an optimizer at another rate resumes
			// from the saved step with the saved base rate.
			h2 := &lrHolder{lr: []float64{123}}
			s2, _ := c.make(h2)
			if err := s2.LoadState(saved); err != nil {
				t.Fatal(err)
			}
			for n := 78; n < 120; n++ {
				s2.Step()
				if got, want := h2.lr[0], c.want(n); math.Abs(got-want) > 1e-14 {
					t.Fatalf("restored, step %d: lr %.17g, closed form %.17g", n, got, want)
				}
			}
		})
	}
}

// TestScheduleSeek pins the per-epoch schedules of `fathom train` (the
// schedule: key of a job config, which the trainer moves with Seek at
// the start of every epoch): StepLR, ExponentialLR, and cosine as
// CosineWithWarmup without warm-up, which holds the floor after t_max.
func TestScheduleSeek(t *testing.T) {
	for _, test := range []struct {
		name string
		make func(LRController) (*Schedule, error)
		want []float64
	}{
		{"step", func(o LRController) (*Schedule, error) { return NewStepLR(o, 2, 0.1) }, []float64{1, 1, 0.1, 0.1, 0.01}},
		{"exp", func(o LRController) (*Schedule, error) { return NewExponentialLR(o, 0.5) }, []float64{1, 0.5, 0.25, 0.125, 0.0625}},
		{"cosine", func(o LRController) (*Schedule, error) { return NewCosineWithWarmup(o, 0, 4, 0) },
			[]float64{1, (1 + math.Sqrt2/2) / 2, 0.5, (1 - math.Sqrt2/2) / 2, 0, 0, 0}},
	} {
		h := &lrHolder{lr: []float64{1}}
		s, err := test.make(h)
		if err != nil {
			t.Fatal(err)
		}
		// Out of order, as a resumed run seeks.
		for _, e := range []int{3, 0, 4, 1, 2, len(test.want) - 1} {
			s.Seek(e)
			if got, w := h.lr[0], test.want[e]; math.Abs(got-w) > 1e-12 || s.Epoch() != e {
				t.Errorf("%s: Seek(%d): lr %v (epoch %d), want %v", test.name, e, got, s.Epoch(), w)
			}
		}
	}
}

func TestPlateauStateRoundTrip(t *testing.T) {
	metrics := []float64{5, 4, 4, 4, 4, 3.9, 3.9, 3.9, 3.9, 3.8, 3.8, 3.8, 3.8, 3.8}
	run := func(restoreAt int) []float64 {
		h := &lrHolder{lr: []float64{1}}
		p, err := NewReduceLROnPlateau(h, PlateauOptions{Factor: 0.5, Patience: 1, Threshold: 0.01, Cooldown: 1})
		if err != nil {
			t.Fatal(err)
		}
		var lrs []float64
		for e, m := range metrics {
			if e == restoreAt {
				b, _ := json.Marshal(p.State())
				var st SchedulerState
				if err := json.Unmarshal(b, &st); err != nil {
					t.Fatal(err)
				}
				p, _ = NewReduceLROnPlateau(h, PlateauOptions{Factor: 0.5, Patience: 1, Threshold: 0.01, Cooldown: 1})
				if err := p.LoadState(st); err != nil {
					t.Fatal(err)
				}
			}
			p.Step(m)
			lrs = append(lrs, h.lr[0])
		}
		return lrs
	}
	want := run(-1)
	if want[len(want)-1] >= 1 {
		t.Fatalf("the metric plateaus but the rate never dropped: %v", want)
	}
	for _, at := range []int{0, 3, 7} {
		got := run(at)
		for e := range want {
			if got[e] != want[e] {
				t.Fatalf("restored at %d: rates %v, uninterrupted %v", at, got, want)
			}
		}
	}
}

func TestScheduleErrors(t *testing.T) {
	h := &lrHolder{lr: []float64{1}}
	for name, err := range map[string]error{
		"StepLR 0":            func() error { _, err := NewStepLR(h, 0, 0.1); return err }(),
		"Exponential -1":      func() error { _, err := NewExponentialLR(h, -1); return err }(),
		"Cosine 0":            func() error { _, err := NewCosineAnnealingLR(h, 0, 0); return err }(),
		"Warmup total≤warmup": func() error { _, err := NewCosineWithWarmup(h, 10, 10, 0); return err }(),
		"Plateau factor 1":    func() error { _, err := NewReduceLROnPlateau(h, PlateauOptions{Factor: 1}); return err }(),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	s, _ := NewStepLR(h, 1, 0.5)
	if err := s.LoadState(SchedulerState{Kind: "ExponentialLR", BaseLRs: []float64{1}}); err == nil {
		t.Error("StepLR loaded an ExponentialLR state")
	}
}
