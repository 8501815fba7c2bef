package trials

import (
	"context"
	"errors"
	"fmt"
	"github.com/fathom-ml/fathom/comm/join"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/fathom-ml/fathom/dashboard"
)

// Target is what a search needs of the config whose trials it runs.
type Target struct {
	Kind         string // the config's kind, as summary.json names it ("train", "ml")
	Metric       string // the metric the search optimizes
	LargerBetter bool
	Epochs       int // the epochs of a full trial (0: the trials have no epochs)
	Objective    Objective
	// Serial, when set, returns why the trials of list must run one at a
	// time in a process ("" when they need not).
	Serial func(list []Trial) string
}

// Mode is the direction of the metric, as --mode writes it.
func (t *Target) Mode() string {
	if t.LargerBetter {
		return "max"
	}
	return "min"
}

// SearchOptions configure Search: the flags of `fathom tune`.
type SearchOptions struct {
	Config string   // the config's path, as the search's messages name it
	Sets   []string // the base config's overrides (shown on the dashboard)
	Grid   []string // grid axes, ParseGrid's form
	Random []string // random axes, ParseRandom's form
	N      int      // random draws
	Seed   uint64   // seed of the random draws
	// Target builds the target once the space is expanded.
	Target func() (*Target, error)
	// Parallel is the trials at once in this process (0: the cores
	// divided among the processes of the host).
	Parallel int
	Mode     string // "max", "min" or "" (the target's)
	ASHA     bool
	ASHAMin  int
	ASHAEta  int
	Out      string // the output directory (rank 0 writes it)
	Quiet    bool   // no per-trial lines on Stderr
	JSON     bool   // the summary as JSON on Stdout instead of a sentence
	Board    *dashboard.Board
	Stdout   io.Writer
	Stderr   io.Writer
}

// TrialDir is the output directory of trial id in a search's out.
func TrialDir(out string, id int) string {
	return filepath.Join(out, "trials", fmt.Sprintf("%03d", id))
}

// search is one run of Search: its options, trials, target and job.
type search struct {
	o      SearchOptions
	list   []Trial
	target *Target
	j      *join.Job
	rank   int
	procs  int
	par    int
	sq     *Shared
	board  *dashboard.Board
	start  time.Time
}

// Search runs a hyperparameter search: it expands the space, joins the
// job when the environment names several processes (every process then
// takes trials from one queue in the job's store), runs the trials and
// writes, on rank 0, the table, the plot, the best model and
// summary.json into o.Out.
func Search(ctx context.Context, o SearchOptions) error {
	s, err := newSearch(o)
	if err != nil {
		return err
	}
	if s.j, err = joinJob(ctx); err != nil {
		return err
	}
	defer s.j.Close()
	if err := s.place(); err != nil {
		return err
	}
	ro := s.runOptions()
	if s.board != nil {
		stop := make(chan struct{})
		defer close(stop)
		s.watch(&ro, stop)
	}
	if s.rank == 0 && !o.Quiet {
		fmt.Fprintf(o.Stderr, "tune: %d trials of %s (%s config), %d at a time in each of %d process(es); %s %s\n",
			len(s.list), o.Config, s.target.Kind, s.par, s.procs, s.target.Mode(), s.target.Metric)
	}
	s.start = time.Now()
	results, err := Run(ctx, ro)
	if err != nil {
		if ctx.Err() != nil && s.sq == nil && len(results) > 0 {
			// Interrupted: the trials that finished are written.
			if werr := s.write(results, nil, len(s.list)); werr != nil {
				return errors.Join(err, werr)
			}
			fmt.Fprintf(o.Stderr, "tune: interrupted; the %d finished trials are in %s\n", len(results), o.Out)
		}
		return err
	}
	if s.sq != nil {
		if s.board != nil {
			defer s.showCollected(ctx)
		}
		return s.finishDistributed(ctx, results)
	}
	return s.write(results, nil, len(s.list))
}

// newSearch expands the space and builds the target.
func newSearch(o SearchOptions) (*search, error) {
	space := Space{N: o.N, Seed: o.Seed}
	for _, g := range o.Grid {
		p, err := ParseGrid(g)
		if err != nil {
			return nil, err
		}
		space.Grid = append(space.Grid, p)
	}
	for _, r := range o.Random {
		p, err := ParseRandom(r)
		if err != nil {
			return nil, err
		}
		space.Random = append(space.Random, p)
	}
	if len(space.Random) == 0 && o.N > 0 {
		return nil, errors.New("--trials N is the number of random draws: give --random key=dist(...) too")
	}
	list, err := space.Trials()
	if err != nil {
		return nil, err
	}
	target, err := o.Target()
	if err != nil {
		return nil, err
	}
	switch o.Mode {
	case "":
	case "max", "min":
		target.LargerBetter = o.Mode == "max"
	default:
		return nil, fmt.Errorf("--mode %q: want max or min", o.Mode)
	}
	return &search{o: o, list: list, target: target}, nil
}

// place sets the process's rank, parallelism and queue, and makes the
// output directory on rank 0.
func (s *search) place() error {
	env := s.j.Env
	s.rank, s.procs = env.Rank, max(env.WorldSize, 1)
	s.par = s.o.Parallel
	if s.par <= 0 {
		s.par = max(runtime.GOMAXPROCS(0)/max(env.LocalWorldSize, 1), 1)
	}
	if s.par > 1 && s.target.Serial != nil {
		if why := s.target.Serial(s.list); why != "" {
			if s.o.Stderr != nil && s.rank == 0 {
				fmt.Fprintf(s.o.Stderr, "tune: %s: one trial at a time in this process\n", why)
			}
			s.par = 1
		}
	}
	if s.rank == 0 {
		if err := os.MkdirAll(s.o.Out, 0o755); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		s.board = s.o.Board
	}
	if s.j.Distributed() {
		s.sq = NewShared(searchStore(s.j.Store), len(s.list))
	}
	return nil
}

// runOptions are the options of Run for this process.
func (s *search) runOptions() Options {
	ro := Options{Trials: s.list, Objective: s.target.Objective, Parallel: s.par, Rank: s.rank}
	if s.sq != nil {
		ro.Queue = s.sq.Queue()
	}
	if s.o.ASHA {
		ro.ASHA = &ASHA{MinEpochs: s.o.ASHAMin, Eta: s.o.ASHAEta, MaxEpochs: s.target.Epochs, LargerBetter: s.target.LargerBetter}
		if s.sq != nil {
			ro.ASHA.Rungs = s.sq.Rungs()
		}
	}
	ro.Finished = func(r Result) {
		if s.board != nil {
			s.board.SetTrial(boardTrial(r))
		}
		if !s.o.Quiet {
			fmt.Fprintln(s.o.Stderr, TrialLine(r, s.target.Metric, len(s.list), s.procs))
		}
	}
	return ro
}

// finishDistributed gathers the results at rank 0 and brings it the best
// trial's model from the process that trained it.
func (s *search) finishDistributed(ctx context.Context, mine []Result) error {
	sq := s.sq
	if s.rank != 0 {
		id, err := sq.WaitBest(ctx)
		if err != nil {
			return err
		}
		for _, r := range mine {
			if r.ID == id {
				b, err := os.ReadFile(r.Model)
				problem := ""
				if err != nil {
					problem = fmt.Sprintf("rank %d: %v", s.rank, err)
				}
				return sq.SendModel(ctx, b, problem)
			}
		}
		return nil
	}
	all, err := sq.Collect(ctx)
	if err != nil {
		return err
	}
	best := Best(all, s.target.LargerBetter)
	id := -1
	if best >= 0 {
		id = all[best].ID
	}
	if err := sq.AnnounceBest(ctx, id); err != nil {
		return err
	}
	var model []byte
	if best >= 0 && all[best].Rank != 0 {
		if model, err = sq.ReceiveModel(ctx); err != nil {
			return err
		}
	}
	return s.write(all, model, len(all))
}
