package trials

import (
	"context"
	"errors"
	"image/png"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/comm/store"
)

// curve is a fake training run: the metric of trial x after epoch e is
// 1 − 1/(e·q), q the trial's "quality" param.
func curve(q float64, e int) float64 { return 1 - 1/(float64(e)*q) }

// fakeObjective "trains" for epochs epochs, reporting each, and fails
// trials whose param q is "fail".
func fakeObjective(epochs int, running *atomic.Int32, peak *atomic.Int32) Objective {
	return func(ctx context.Context, t Trial, report Report) (Outcome, error) {
		if running != nil {
			n := running.Add(1)
			defer running.Add(-1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			time.Sleep(5 * time.Millisecond) // let the other workers start
		}
		if t.Params[0].Value == "fail" {
			return Outcome{}, errors.New("boom")
		}
		q, _ := strconv.ParseFloat(t.Params[0].Value, 64)
		out := Outcome{Model: "m" + strconv.Itoa(t.ID)}
		for e := 1; e <= epochs; e++ {
			out.Epochs, out.Metric = e, curve(q, e)
			if e == epochs {
				break
			}
			goOn, err := report(e, out.Metric)
			if err != nil {
				return out, err
			}
			if !goOn {
				out.Stopped = true
				return out, nil
			}
		}
		return out, nil
	}
}

func gridTrials(t *testing.T, values ...string) []Trial {
	ts, err := Space{Grid: []Param{{Key: "q", Values: values}}}.Trials()
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// TestRunWorkers runs every trial once on 3 workers, keeps failures as
// results and picks the best completed trial.
func TestRunWorkers(t *testing.T) {
	ts := gridTrials(t, "1", "4", "fail", "2", "8", "3", "0.5")
	var running, peak atomic.Int32
	var finished, progress atomic.Int32
	rs, err := Run(context.Background(), Options{Trials: ts, Objective: fakeObjective(5, &running, &peak), Parallel: 3,
		Finished: func(Result) { finished.Add(1) }, Progress: func(Trial, int, float64) { progress.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != len(ts) || int(finished.Load()) != len(ts) {
		t.Fatalf("%d results, %d finished callbacks; want %d", len(rs), finished.Load(), len(ts))
	}
	if p := progress.Load(); p != 6*4 { // 6 trials report epochs 1-4
		t.Errorf("%d progress reports, want 24", p)
	}
	if p := peak.Load(); p < 2 || p > 3 {
		t.Errorf("at most %d trials ran at once with Parallel 3", p)
	}
	for i, r := range rs {
		if r.ID != i {
			t.Fatalf("results not by ID: %d at %d", r.ID, i)
		}
		if i == 2 {
			if r.Status != Failed || r.Error != "boom" || !math.IsNaN(r.Metric) || r.Model != "" {
				t.Errorf("failed trial: %+v", r)
			}
			continue
		}
		q, _ := strconv.ParseFloat(r.Params[0].Value, 64)
		if r.Status != Done || r.Epochs != 5 || r.Metric != curve(q, 5) {
			t.Errorf("trial %d: %+v", i, r)
		}
	}
	if b := Best(rs, true); b != 4 {
		t.Errorf("best trial %d, want 4 (q=8)", b)
	}
	if b := Best(rs, false); b != 6 {
		t.Errorf("best trial (smaller better) %d, want 6 (q=0.5)", b)
	}
}

// TestRunASHA runs trials one at a time in order, so ASHA's decisions
// are those of a fixed sequence: q = 1, 2, ... 9, eta 3, rungs 1, 3, 9.
func TestRunASHA(t *testing.T) {
	ts := gridTrials(t, "1", "2", "3", "4", "5", "6", "7", "8", "9")
	asha := &ASHA{MinEpochs: 1, Eta: 3, MaxEpochs: 27, LargerBetter: true}
	rs, err := Run(context.Background(), Options{Trials: ts, Objective: fakeObjective(27, nil, nil), Parallel: 1, ASHA: asha})
	if err != nil {
		t.Fatal(err)
	}
	// Each new trial beats all before it (the metric grows with q), so it
	// is the best so far at every rung and runs to the end.
	for _, r := range rs {
		if r.Status != Done || r.Epochs != 27 {
			t.Errorf("increasing quality: trial %d %s after %d epochs", r.ID, r.Status, r.Epochs)
		}
	}
	// In decreasing order, each new trial is the worst so far: only the
	// first runs to the end, the others stop at the first rung unless
	// they sit at the bar (the second of two at eta 3: the bar is
	// interpolated above it).
	ts = gridTrials(t, "9", "8", "7", "6", "5", "4", "3", "2", "1")
	asha = &ASHA{MinEpochs: 1, Eta: 3, MaxEpochs: 27, LargerBetter: true}
	rs, err = Run(context.Background(), Options{Trials: ts, Objective: fakeObjective(27, nil, nil), Parallel: 1, ASHA: asha})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		want, epochs := Stopped, 1
		if r.ID == 0 {
			want, epochs = Done, 27
		}
		if r.Status != want || r.Epochs != epochs {
			t.Errorf("decreasing quality: trial %d %s after %d epochs, want %s after %d", r.ID, r.Status, r.Epochs, want, epochs)
		}
		if r.Status == Stopped && r.Model != "" {
			t.Errorf("stopped trial %d kept a model", r.ID)
		}
	}
}

func newStore(t *testing.T) (addr string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := store.Serve(ln, []byte("tok"), slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { s.Close() })
	return s.Addr().String()
}

// TestShared runs one search from three "processes" (each its own
// store client and workers) sharing the queue and the ASHA rungs: every
// trial runs exactly once, rank 0 collects all results, and the best
// model crosses the store.
func TestShared(t *testing.T) {
	addr := newStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var vals []string
	for q := 1; q <= 12; q++ {
		vals = append(vals, strconv.Itoa(q))
	}
	ts := gridTrials(t, vals...)
	const procs = 3
	mine := make([][]Result, procs)
	queues := make([]*Shared, procs)
	var wg sync.WaitGroup
	errs := make([]error, procs)
	for r := range procs {
		c, err := store.Dial(ctx, addr, []byte("tok"), r)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		q := NewShared(c, len(ts))
		queues[r] = q
		wg.Add(1)
		go func() {
			defer wg.Done()
			asha := &ASHA{MinEpochs: 1, Eta: 3, MaxEpochs: 9, LargerBetter: true, Rungs: q.Rungs()}
			mine[r], errs[r] = Run(ctx, Options{Trials: ts, Objective: fakeObjective(9, nil, nil), Parallel: 2, Queue: q.Queue(), Rank: r, ASHA: asha})
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	ran := map[int]int{}
	for r := range procs {
		for _, res := range mine[r] {
			ran[res.ID]++
			if res.Rank != r {
				t.Errorf("rank %d reports trial %d as rank %d's", r, res.ID, res.Rank)
			}
		}
	}
	all, err := queues[0].Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, res := range all {
		if ran[i] != 1 || res.ID != i {
			t.Errorf("trial %d ran %d times (result ID %d)", i, ran[i], res.ID)
		}
		q, _ := strconv.ParseFloat(res.Params[0].Value, 64)
		if res.Metric != curve(q, res.Epochs) {
			t.Errorf("trial %d: metric %v after %d epochs, want %v", i, res.Metric, res.Epochs, curve(q, res.Epochs))
		}
	}
	if all[len(all)-1].Status != Done {
		t.Errorf("the best trial (q=12) was stopped: %+v", all[len(all)-1])
	}
	best := Best(all, true)
	if err := queues[0].AnnounceBest(ctx, all[best].ID); err != nil {
		t.Fatal(err)
	}
	owner := all[best].Rank
	if id, err := queues[owner].WaitBest(ctx); err != nil || id != all[best].ID {
		t.Fatalf("WaitBest: %d, %v", id, err)
	}
	if err := queues[owner].SendModel(ctx, []byte("weights"), ""); err != nil {
		t.Fatal(err)
	}
	if b, err := queues[0].ReceiveModel(ctx); err != nil || string(b) != "weights" {
		t.Errorf("ReceiveModel: %q, %v", b, err)
	}
}

func TestStoreRungsMatchMemory(t *testing.T) {
	addr := newStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := store.Dial(ctx, addr, []byte("tok"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sr, mr := NewShared(c, 0).Rungs(), &MemRungs{}
	for i, v := range []float64{0.3, 0.1, math.Inf(-1), 0.7, 0.2} {
		a, err1 := sr.Record(ctx, i%2, v)
		b, err2 := mr.Record(ctx, i%2, v)
		if err1 != nil || err2 != nil || len(a) != len(b) {
			t.Fatalf("record %d: %v %v, %v %v", i, a, err1, b, err2)
		}
		for k := range a {
			if a[k] != b[k] {
				t.Fatalf("record %d: store %v, memory %v", i, a, b)
			}
		}
	}
}

func TestWriteResults(t *testing.T) {
	dir := t.TempDir()
	rs := []Result{
		{ID: 0, Params: []KV{{"lr", "0.1"}, {"opt", "adam"}}, Metric: 0.9, Epochs: 10, Status: Done, Seconds: 1.5, Model: "a",
			Extra: map[string]float64{"test_loss": 0.2}},
		{ID: 1, Params: []KV{{"lr", "0.001"}, {"opt", "sgd"}}, Metric: 0.5, Epochs: 1, Status: Stopped, Seconds: 0.1, Rank: 1},
		{ID: 2, Params: []KV{{"lr", "0.01"}, {"opt", "x,y"}}, Metric: math.NaN(), Status: Failed, Error: "bad lr"},
	}
	csvPath, jsonPath, pngPath := filepath.Join(dir, "t.csv"), filepath.Join(dir, "t.jsonl"), filepath.Join(dir, "t.png")
	if err := WriteCSV(csvPath, rs, "accuracy"); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSONL(jsonPath, rs, "accuracy"); err != nil {
		t.Fatal(err)
	}
	if err := WritePlot(pngPath, rs, "accuracy"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(csvPath)
	want := `trial,lr,opt,accuracy,epochs,status,seconds,rank,test_loss,error
0,0.1,adam,0.9,10,done,1.500,0,0.2,
1,0.001,sgd,0.5,1,stopped,0.100,1,,
2,0.01,"x,y",,0,failed,0.000,0,,bad lr
`
	if string(b) != want {
		t.Errorf("CSV:\n%s\nwant:\n%s", b, want)
	}
	b, _ = os.ReadFile(jsonPath)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], `{"trial":0,"params":{"lr":0.1,"opt":"adam"},"metric_name":"accuracy","metric":0.9,"epochs":10,"status":"done"`) ||
		!strings.Contains(lines[2], `"metric":null`) || !strings.Contains(lines[2], `"error":"bad lr"`) {
		t.Errorf("JSON lines:\n%s", b)
	}
	f, err := os.Open(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	// Two panels: by trial and by lr (opt is not numeric).
	if w := img.Bounds().Dx(); w != 2*480 {
		t.Errorf("plot %d pixels wide, want two panels", w)
	}
}

// TestRunCancel: a search cancelled after two trials returns the trials
// that finished, the context's error, and starts no more.
func TestRunCancel(t *testing.T) {
	ts := gridTrials(t, "1", "2", "3", "4", "5", "6", "7", "8")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var finished atomic.Int32
	rs, err := Run(ctx, Options{Trials: ts, Objective: fakeObjective(3, nil, nil), Parallel: 1,
		Finished: func(Result) {
			if finished.Add(1) == 2 {
				cancel()
			}
		}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	if len(rs) != 2 || rs[0].ID != 0 || rs[1].ID != 1 {
		t.Errorf("cancelled after two: results %+v", rs)
	}
}
