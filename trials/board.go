package trials

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/fathom-ml/fathom/dashboard"
)

// boardTrial is a trial's row on the dashboard.
func boardTrial(r Result) dashboard.Trial {
	t := dashboard.Trial{ID: r.ID, Status: string(r.Status), Epochs: r.Epochs, Seconds: r.Seconds, Rank: r.Rank, Error: r.Error}
	for _, p := range r.Params {
		t.Params = append(t.Params, dashboard.TrialParam{Key: p.Key, Value: p.Value})
	}
	if m := r.Metric; !math.IsNaN(m) && !math.IsInf(m, 0) {
		t.Metric = &m
	}
	return t
}

// pending is a trial not finished yet, as the board shows it.
func pending(t Trial, status Status, metric float64, epochs, rank int) dashboard.Trial {
	return boardTrial(Result{ID: t.ID, Params: t.Params, Metric: metric, Epochs: epochs, Status: status, Rank: rank})
}

// commandLine is the search as a `fathom tune` command line.
func (s *search) commandLine() string {
	o := s.o
	line := "fathom tune " + o.Config
	for _, g := range o.Grid {
		line += " --grid " + g
	}
	for _, r := range o.Random {
		line += " --random " + r
	}
	if o.N > 0 {
		line += fmt.Sprintf(" --trials %d --seed %d", o.N, o.Seed)
	}
	for _, set := range o.Sets {
		line += " --set " + set
	}
	return line
}

// watch shows the search on the board: every trial queued, then as it
// starts, progresses and finishes; with a store queue the trials other
// processes finish too, until stop is closed.
func (s *search) watch(ro *Options, stop <-chan struct{}) {
	board, t := s.board, s.target
	cfgText, _ := os.ReadFile(s.o.Config)
	board.SetInfo(dashboard.RunInfo{Title: "tune " + filepath.Base(s.o.Config), Kind: "tune", Config: "# " + s.commandLine() + "\n" + string(cfgText),
		Headline: t.Metric, Mode: t.Mode(), Trials: len(s.list), Epochs: t.Epochs, WorldSize: s.procs, Machine: dashboard.LocalMachine()})
	for _, tr := range s.list {
		board.SetTrial(pending(tr, "queued", math.NaN(), 0, -1))
	}
	ro.Started = func(tr Trial) { board.SetTrial(pending(tr, "running", math.NaN(), 0, s.rank)) }
	ro.Progress = func(tr Trial, epoch int, v float64) { board.SetTrial(pending(tr, "running", v, epoch, s.rank)) }
	if s.sq != nil {
		go s.pollTrials(stop)
	}
}

// showCollected shows every trial of a distributed search, as collected.
func (s *search) showCollected(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if all, err := s.sq.Collect(cctx); err == nil {
		for _, r := range all {
			s.board.SetTrial(boardTrial(r))
		}
	}
}

// pollTrials shows on rank 0's board the trials other processes finish,
// read from the job's store on a client of its own, until stop is closed.
func (s *search) pollTrials(stop <-chan struct{}) {
	n := len(s.list)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	st, err := s.j.DialStore(ctx)
	cancel()
	if err != nil {
		return // best effort: the table fills at the end
	}
	defer st.Close()
	q := NewShared(searchStore(st), n)
	seen := make([]bool, n)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		for id := range n {
			if seen[id] {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			r, ok := q.Result(ctx, id)
			cancel()
			if ok {
				seen[id] = true
				s.board.SetTrial(boardTrial(r))
			}
		}
	}
}
