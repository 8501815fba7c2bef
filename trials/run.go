package trials

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/fathom-ml/fathom/comm/workqueue"
)

// Status is how a trial ended.
type Status string

// The statuses of a trial.
const (
	Done    Status = "done"    // ran all its epochs (or its fit)
	Stopped Status = "stopped" // stopped at a rung by ASHA
	Failed  Status = "failed"  // its run returned an error
)

// Result is one row of the results table.
type Result struct {
	ID     int
	Params []KV
	// Metric is the searched metric at the trial's last epoch (or of its
	// fit); NaN when the trial failed.
	Metric float64
	// Epochs is the number of epochs run (0 for a fit without epochs).
	Epochs  int
	Status  Status
	Seconds float64
	// Rank is the worker that ran the trial (0 in one process).
	Rank int
	// Model is the trial's model file, on Rank's host ("" when none was
	// written: a stopped or failed trial).
	Model string
	// Extra holds other figures of the trial (the test metric, ...).
	Extra map[string]float64
	// Weights fingerprints the trained weights (train configs: job's
	// WeightsSHA256), to check a trial against the same config run alone.
	Weights string
	// Error is the error of a failed trial.
	Error string
}

// Outcome is what an Objective returns for a trial.
type Outcome struct {
	Metric  float64
	Epochs  int
	Stopped bool
	Model   string
	Extra   map[string]float64
	Weights string
}

// Report is given to an Objective: it calls it with its metric after
// each epoch, and stops the trial (returning an Outcome with Stopped set)
// when it returns false.
type Report func(epoch int, value float64) (bool, error)

// Objective runs one trial. Its result must depend on the trial's params
// alone (and the base config), not on the other trials running beside it.
type Objective func(ctx context.Context, t Trial, report Report) (Outcome, error)

// Options configure Run.
type Options struct {
	Trials    []Trial
	Objective Objective
	// Parallel is the number of trials this process runs at once
	// (default 1).
	Parallel int
	// Queue hands out the trials (by index into Trials) and keeps their
	// results: nil is a queue of this process alone (workqueue.Local);
	// Shared.Queue shares the search with the job's other processes.
	Queue workqueue.Queue
	// ASHA, if set, stops weak trials at its rungs.
	ASHA *ASHA
	// Rank names this process in the results.
	Rank int
	// Started and Finished, if set, are called as trials start and end
	// (from the worker goroutines).
	Started  func(t Trial)
	Finished func(r Result)
	// Progress, if set, is called with a running trial's metric after
	// each epoch it reports (from the worker goroutines).
	Progress func(t Trial, epoch int, value float64)
}

// Run runs trials from the queue on Parallel workers of this process until
// the queue is empty, and returns the results of the trials this process
// ran, by ID. A failed trial is a result (status failed), not an error;
// Run's error is the queue's or ctx's.
func Run(ctx context.Context, o Options) ([]Result, error) {
	if o.Objective == nil {
		return nil, errors.New("trials: no objective")
	}
	if o.Queue == nil {
		o.Queue = workqueue.NewLocal(len(o.Trials))
	}
	if o.ASHA != nil {
		if err := o.ASHA.Check(); err != nil {
			return nil, err
		}
		if o.ASHA.Rungs == nil {
			// Set before the workers start: Continue would set it from each.
			o.ASHA.Rungs = &MemRungs{}
		}
	}
	par := max(o.Parallel, 1)
	var (
		mu      sync.Mutex
		mine    []Result
		firstEr error
		wg      sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstEr == nil {
			firstEr = err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i, ok, err := o.Queue.Claim(ctx)
				if err != nil {
					fail(fmt.Errorf("trials: queue: %w", err))
					cancel()
					return
				}
				if !ok {
					return
				}
				if i < 0 || i >= len(o.Trials) {
					fail(fmt.Errorf("trials: queue handed out trial %d of %d", i, len(o.Trials)))
					cancel()
					return
				}
				r := runOne(ctx, o, o.Trials[i])
				if ctx.Err() != nil {
					return
				}
				b, err := encodeResult(r)
				if err == nil {
					err = o.Queue.Done(ctx, r.ID, b)
				}
				if err != nil {
					fail(fmt.Errorf("trials: queue: %w", err))
					cancel()
					return
				}
				if o.Finished != nil {
					o.Finished(r)
				}
				mu.Lock()
				mine = append(mine, r)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstEr == nil && ctx.Err() != nil {
		firstEr = ctx.Err()
	}
	SortByID(mine)
	return mine, firstEr
}

// runOne runs a trial and turns its outcome into a result.
func runOne(ctx context.Context, o Options, t Trial) Result {
	if o.Started != nil {
		o.Started(t)
	}
	start := time.Now()
	report := func(epoch int, v float64) (bool, error) {
		if o.Progress != nil {
			o.Progress(t, epoch, v)
		}
		if o.ASHA == nil {
			return true, nil
		}
		return o.ASHA.Continue(ctx, epoch, v)
	}
	out, err := o.Objective(ctx, t, report)
	r := Result{ID: t.ID, Params: t.Params, Metric: out.Metric, Epochs: out.Epochs, Status: Done,
		Seconds: time.Since(start).Seconds(), Rank: o.Rank, Model: out.Model, Extra: out.Extra, Weights: out.Weights}
	switch {
	case err != nil:
		r.Status, r.Error, r.Metric, r.Model, r.Weights = Failed, err.Error(), math.NaN(), "", ""
	case out.Stopped:
		r.Status, r.Model = Stopped, ""
	}
	return r
}
