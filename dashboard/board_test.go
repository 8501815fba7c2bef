package dashboard

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

func TestStepStoreBound(t *testing.T) {
	for _, test := range []struct{ max, steps int }{
		{2, 1}, {2, 7}, {10, 9}, {10, 10}, {10, 1001}, {20000, 100000}, {DefaultMaxSteps, 250001},
	} {
		s := newStepStore(test.max)
		var lossSum float64
		for i := 1; i <= test.steps; i++ {
			loss := float64(i % 13)
			lossSum += loss
			s.add(Step{Step: i, Epoch: 1 + i/1000, Loss: loss, T: float64(i)})
		}
		s.flush()
		pts := s.after(-1)
		if len(pts) > test.max || len(pts) == 0 {
			t.Errorf("max %d, %d steps: %d points", test.max, test.steps, len(pts))
			continue
		}
		if test.steps >= test.max && len(pts) < test.max/2-1 {
			t.Errorf("max %d, %d steps: only %d points", test.max, test.steps, len(pts))
		}
		n, weighted, prev := 0, 0.0, 0
		for _, p := range pts {
			if p.Step <= prev {
				t.Fatalf("max %d, %d steps: steps out of order: %d after %d", test.max, test.steps, p.Step, prev)
			}
			prev = p.Step
			n += p.N
			weighted += p.Loss * float64(p.N)
		}
		if n != test.steps || prev != test.steps {
			t.Errorf("max %d, %d steps: points stand for %d steps, end at %d", test.max, test.steps, n, prev)
		}
		if math.Abs(weighted-lossSum) > 1e-6*lossSum {
			t.Errorf("max %d, %d steps: loss sum %g after merging, want %g", test.max, test.steps, weighted, lossSum)
		}
	}
}

func TestBoardDropsOldSteps(t *testing.T) {
	b := NewBoard(100)
	b.AddStep(Step{Step: 5, Loss: 1})
	b.AddStep(Step{Step: 5, Loss: 2}) // a repeat
	b.AddStep(Step{Step: 3, Loss: 3}) // out of order
	b.AddStep(Step{Step: 6, Loss: 4})
	if s := b.Snapshot().Steps; len(s) != 2 || s[0].Loss != 1 || s[1].Loss != 4 {
		t.Errorf("steps %+v, want steps 5 and 6 with losses 1 and 4", s)
	}
}

func TestStateJSON(t *testing.T) {
	b := NewBoard(0)
	b.SetInfo(RunInfo{Title: "iris", Epochs: 2, Headline: "accuracy", Machine: LocalMachine()})
	b.AddStep(Step{Step: 1, Epoch: 1, Batches: 7, Loss: math.NaN(), LR: 0.01})
	b.AddStep(Step{Step: 2, Epoch: 1, Batches: 7, Loss: 0.5, LR: 0.01})
	b.AddEpoch(Epoch{Epoch: 1, Steps: 2, Train: map[string]float64{"loss": 0.7, "rmse": math.NaN()}})
	b.Finish(nil)
	raw, err := json.Marshal(b.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Info   RunInfo
		Epochs []Epoch
		Steps  map[string][]*float64
		Status Status
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("%v in %s", err, raw)
	}
	if got.Info.Title != "iris" || got.Info.StepsPerEpoch != 7 || got.Info.Machine.GOMAXPROCS < 1 {
		t.Errorf("info %+v", got.Info)
	}
	if len(got.Epochs) != 1 || got.Epochs[0].Train["loss"] != 0.7 || len(got.Epochs[0].Train) != 1 {
		t.Errorf("epochs %+v, want one with loss 0.7 and no rmse", got.Epochs)
	}
	loss := got.Steps["loss"]
	if len(loss) != 2 || loss[0] != nil || loss[1] == nil || *loss[1] != 0.5 {
		t.Errorf("loss column %v, want [null 0.5]", loss)
	}
	if !got.Status.Done || got.Status.Error != "" {
		t.Errorf("status %+v", got.Status)
	}
}

func TestFinishWithError(t *testing.T) {
	b := NewBoard(0)
	c := newCursor()
	b.news(&c)
	b.Finish(errors.New("train: epoch 3, batch 2: loss is NaN"))
	evs := b.news(&c)
	if len(evs) != 1 || evs[0].name != "done" || !strings.Contains(string(evs[0].data), `"error":"train: epoch 3, batch 2: loss is NaN"`) {
		t.Errorf("events after a failure: %q", evs)
	}
	if evs := b.news(&c); len(evs) != 0 {
		t.Errorf("the end sent twice: %q", evs)
	}
}

// TestBoardTrials checks that trials are sent as one sorted list when
// they change, updates replace a trial, and non-finite metrics are
// dropped.
func TestBoardTrials(t *testing.T) {
	b := NewBoard(0)
	c := newCursor()
	b.news(&c)
	acc := 0.9
	nan := math.NaN()
	b.SetTrial(Trial{ID: 2, Params: []TrialParam{{"lr", "0.1"}}, Status: "running"})
	b.SetTrial(Trial{ID: 0, Params: []TrialParam{{"lr", "0.01"}}, Status: "done", Metric: &acc, Epochs: 5})
	b.SetTrial(Trial{ID: 2, Params: []TrialParam{{"lr", "0.1"}}, Status: "failed", Metric: &nan, Error: "boom"})
	evs := b.news(&c)
	if len(evs) != 1 || evs[0].name != "trials" {
		t.Fatalf("events %v, want one trials event", evs)
	}
	want := `[{"id":0,"params":[{"key":"lr","value":"0.01"}],"status":"done","metric":0.9,"epochs":5,"seconds":0,"rank":0},` +
		`{"id":2,"params":[{"key":"lr","value":"0.1"}],"status":"failed","metric":null,"epochs":0,"seconds":0,"rank":0,"error":"boom"}]`
	if string(evs[0].data) != want {
		t.Errorf("trials event\n%s\nwant\n%s", evs[0].data, want)
	}
	if evs := b.news(&c); len(evs) != 0 {
		t.Errorf("no change, yet events %v", evs)
	}
	if s := b.Snapshot(); len(s.Trials) != 2 || s.Trials[1].Status != "failed" {
		t.Errorf("snapshot trials %+v", s.Trials)
	}
}
