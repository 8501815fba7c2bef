package dashboard

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/runlog"
)

// sampleBoard is a finished run of 3 epochs of 4 steps, kept to 6 points.
func sampleBoard() *Board {
	b := NewBoard(6)
	b.SetInfo(RunInfo{Title: "sample.yaml", Kind: "train", Headline: "accuracy", EvalSplit: "test", Epochs: 3,
		Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	step := 0
	for e := 1; e <= 3; e++ {
		for i := 1; i <= 4; i++ {
			step++
			b.AddStep(Step{Step: step, Epoch: e, Batch: i, Batches: 4, Loss: 1 / float64(step), LR: 0.1 * float64(e),
				SamplesPerSec: 100 * float64(step), Compute: 0.01, T: float64(step)})
		}
		b.AddEpoch(Epoch{Epoch: e, Steps: step, Train: map[string]float64{"loss": 1 / float64(e), "accuracy": 0.5 + 0.1*float64(e)},
			Eval: map[string]float64{"loss": 2 / float64(e), "accuracy": 0.4 + 0.1*float64(e)}, LR: 0.1, Seconds: 1.5, T: float64(step)})
	}
	b.Finish(nil)
	return b
}

// TestStateRoundTrip: a state written by WriteState reads back equal, its
// steps columns included, and Restore serves it as the board did.
func TestStateRoundTrip(t *testing.T) {
	b := sampleBoard()
	want := b.Snapshot()
	if len(want.Steps) < 3 || len(want.Steps) > 6 {
		t.Fatalf("sample board holds %d step points", len(want.Steps))
	}
	path := filepath.Join(t.TempDir(), runlog.DashboardFile)
	if err := WriteState(path, want); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got State
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	// the columns keep 7 significant digits of measurements
	for i := range got.Steps {
		g, w := &got.Steps[i], want.Steps[i]
		for _, f := range []struct {
			got  *float64
			want float64
		}{{&g.Loss, w.Loss}, {&g.LR, w.LR}, {&g.SamplesPerSec, w.SamplesPerSec}, {&g.Compute, w.Compute}, {&g.T, w.T}} {
			if d := math.Abs(*f.got - f.want); d > 1e-6*math.Abs(f.want) {
				t.Errorf("step point %d: %v, want %v", i, *f.got, f.want)
			}
			*f.got = f.want
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, want)
	}
	r := Restore(got, 0).Snapshot()
	if !reflect.DeepEqual(r, got) {
		t.Errorf("restored\n%+v\nwant\n%+v", r, got)
	}
	// A restored board keeps its bound: merging what it is given.
	small := Restore(got, 2).Snapshot()
	if len(small.Steps) > 2 || small.Steps[len(small.Steps)-1].Step != 12 {
		t.Errorf("restored into 2 points: %+v", small.Steps)
	}
	n := 0
	for _, p := range small.Steps {
		n += p.N
	}
	if n != 12 {
		t.Errorf("restored points stand for %d steps, want 12", n)
	}
}

func TestStateUnmarshalRejects(t *testing.T) {
	for _, bad := range []string{
		`{"steps":{"step":[1,2],"loss":[1]}}`,
		`{"steps":{"step":[2,1],"loss":[1,1]}}`,
		`{"steps":[1,2]}`,
	} {
		var s State
		if err := json.Unmarshal([]byte(bad), &s); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// TestMetricsState: a run known by its metrics file alone replays as
// its epochs, each standing at its number of steps, their times summed.
func TestMetricsState(t *testing.T) {
	in := "epoch,train_loss,train_accuracy,test_loss,test_accuracy,lr,seconds,eval_seconds\n" +
		"1,1.12,0.43,0.9,0.67,0.01,0.5,0.1\n" +
		"2,0.8,0.6,,0.7,0.01,0.5,0.1\n"
	l, err := runlog.ReadMetricsCSV(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	s := MetricsState(l)
	if s.Info.Headline != "accuracy" || s.Info.EvalSplit != "test" || s.Info.Task != "classification" || len(s.Epochs) != 2 ||
		s.Info.StepsPerEpoch != 1 || !s.Status.Done || math.Abs(s.Status.T-1.2) > 1e-12 {
		t.Fatalf("info %+v, status %+v, %d epochs", s.Info, s.Status, len(s.Epochs))
	}
	e := s.Epochs[1]
	want := Epoch{Epoch: 2, Steps: 2, Train: map[string]float64{"loss": 0.8, "accuracy": 0.6},
		Eval: map[string]float64{"accuracy": 0.7}, LR: 0.01, Seconds: 0.5, EvalSeconds: 0.1, T: 1.2}
	if !reflect.DeepEqual(e, want) {
		t.Errorf("epoch 2: %+v, want %+v", e, want)
	}
	reg := "epoch,train_loss,train_rmse,val_loss,val_rmse,lr,seconds,eval_seconds,steps\n1,4,2,9,3,0.1,1,1,7\n"
	l, err = runlog.ReadMetricsCSV(strings.NewReader(reg))
	if s := MetricsState(l); err != nil || s.Info.Headline != "rmse" || s.Info.EvalSplit != "val" || s.Info.Task != "regression" ||
		s.Epochs[0].Eval["rmse"] != 3 || s.Epochs[0].Steps != 7 || s.Info.StepsPerEpoch != 0 {
		t.Errorf("regression file: %+v, %v", s, err)
	}
}

// TestLoadRun: a run directory replays from its dashboard.json when it
// has one, else from metrics.csv; anything else is a clear error.
func TestLoadRun(t *testing.T) {
	dir := t.TempDir()
	metrics := "epoch,train_loss,train_accuracy,val_loss,val_accuracy,lr,seconds,eval_seconds\n1,1,0.5,1,0.5,0.1,1,0\n"
	if err := os.WriteFile(filepath.Join(dir, runlog.MetricsFile), []byte(metrics), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s := b.Snapshot(); len(s.Epochs) != 1 || !s.Status.Done || s.Info.Title != filepath.Base(dir) {
		t.Errorf("from metrics.csv: %+v", s)
	}
	full := sampleBoard().Snapshot()
	if err := WriteState(filepath.Join(dir, runlog.DashboardFile), full); err != nil {
		t.Fatal(err)
	}
	b, err = LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s := b.Snapshot(); len(s.Epochs) != 3 || len(s.Steps) != len(full.Steps) || s.Info.Title != "sample.yaml" {
		t.Errorf("from dashboard.json: %d epochs, %d steps, title %q", len(s.Epochs), len(s.Steps), s.Info.Title)
	}
	if _, err := LoadRun(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a run directory") {
		t.Errorf("empty directory: %v", err)
	}
	bad := filepath.Join(t.TempDir(), runlog.DashboardFile)
	os.WriteFile(bad, []byte("{"), 0o644)
	if _, err := LoadRun(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("broken state file: %v", err)
	}
}

// TestRunsHandler: several runs are served as a compare page with their
// states at /api/runs and each run's own page under /runs/N/.
func TestRunsHandler(t *testing.T) {
	a, b := sampleBoard(), NewBoard(0)
	b.SetInfo(RunInfo{Title: "other"})
	b.AddEpoch(Epoch{Epoch: 1, Steps: 10, Train: map[string]float64{"loss": 3}})
	b.Finish(nil)
	srv := httptest.NewServer(RunsHandler([]Run{{"a", a}, {"b", b}}, HandlerOptions{Token: "tok"}))
	defer srv.Close()
	get := func(path string, auth bool) (int, string) {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		if auth {
			req.Header.Set("Authorization", "Bearer tok")
		}
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, _ := get("/api/runs", false); code != http.StatusUnauthorized {
		t.Errorf("no token: %d", code)
	}
	code, body := get("/api/runs", true)
	var runs []RunState
	if err := json.Unmarshal([]byte(body), &runs); code != 200 || err != nil || len(runs) != 2 || runs[1].Name != "b" ||
		runs[1].Page != "runs/1/" || len(runs[0].State.Epochs) != 3 || runs[1].State.Info.Title != "other" {
		t.Fatalf("/api/runs: %d %v %+v", code, err, runs)
	}
	if code, body := get("/", true); code != 200 || !strings.Contains(body, "compare.js") {
		t.Errorf("/: %d %.80q", code, body)
	}
	if code, body := get("/runs/1/api/state", true); code != 200 || !strings.Contains(body, `"title":"other"`) {
		t.Errorf("/runs/1/api/state: %d %.80q", code, body)
	}
	if code, body := get("/runs/0/", true); code != 200 || !strings.Contains(body, "app.js") {
		t.Errorf("/runs/0/: %d %.80q", code, body)
	}
	if code, _ := get("/runs/0", true); code != http.StatusMovedPermanently {
		t.Errorf("/runs/0: %d, want a redirect", code)
	}
	for _, p := range []string{"/runs/2/", "/runs/01/", "/runs/x/", "/runs/-1/"} {
		if code, _ := get(p, true); code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, code)
		}
	}
	req, _ := http.NewRequest("POST", srv.URL+"/api/runs", nil)
	req.Header.Set("Authorization", "Bearer tok")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %v %v", resp, err)
	}
	// one run: its own page at /
	one := httptest.NewServer(RunsHandler([]Run{{"a", a}}, HandlerOptions{}))
	defer one.Close()
	resp, err := http.Get(one.URL + "/api/state")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("one run: %v %v", resp, err)
	}
	resp.Body.Close()
}
