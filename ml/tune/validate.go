package tune

import (
	"fmt"
	"math"
	"sync"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
)

// Distribution says how a validator uses the ranks of the Data's Comm
// (under `fathom run -n N`). In one process both are the same.
type Distribution int

const (
	// DataParallel: every rank holds its own rows; every fit and every
	// evaluation is a distributed one over the Comm, and all ranks walk
	// the grid points and folds in the same order, one fit at a time
	// (Parallelism applies only in one process: concurrent fits would
	// interleave their collectives).
	DataParallel Distribution = iota
	// Spread: every rank holds ALL the rows (small data read whole); the
	// (fold, grid point) fits are spread over the ranks — rank r takes
	// fits r, r+N, r+2N, ... of the list ordered fold by fold — each fit
	// local to its rank (Parallelism of them at a time), and the metrics
	// are all-reduced so every rank picks the same best point. The best
	// model is then refit data-parallel, each rank on a contiguous 1/N
	// share of the rows.
	Spread
)

// String is the config spelling: "dataParallel" or "spread".
func (m Distribution) String() string {
	switch m {
	case DataParallel:
		return "dataParallel"
	case Spread:
		return "spread"
	}
	return fmt.Sprintf("Distribution(%d)", int(m))
}

// validator is what CrossValidator and TrainValidationSplit share.
type validator struct {
	name        string
	est         ml.Estimator
	grid        []ParamMap
	ev          ml.Evaluator
	parallelism int
	collect     bool
	mode        Distribution
}

// split assigns a global row index to its validation fold (0..k-1), or −1
// for a row that is only ever trained on.
type split func(row int) int

// outcome is what run returns: metrics[fold][point], the sub-models
// (when collected; in Spread mode only this rank's), the best point and
// the best model refit on all rows.
type outcome struct {
	metrics   [][]float64
	avg       []float64
	best      int
	bestModel ml.Model
	subModels [][]ml.Model
}

func (v *validator) check() error {
	switch {
	case v.est == nil:
		return fmt.Errorf("%s: no estimator", v.name)
	case v.ev == nil:
		return fmt.Errorf("%s: no evaluator", v.name)
	case len(v.grid) == 0:
		return fmt.Errorf("%s: the parameter grid is empty (an axis has no values?)", v.name)
	case v.parallelism < 1:
		return fmt.Errorf("%s: parallelism must be ≥ 1, got %d", v.name, v.parallelism)
	case v.mode != DataParallel && v.mode != Spread:
		return fmt.Errorf("%s: unknown distribution %d", v.name, int(v.mode))
	}
	return nil
}

// rowOffset returns the global index of this rank's first row: the rows
// of the ranks before it (DataParallel), or 0 (Spread: every rank holds
// every row, which it checks).
func (v *validator) rowOffset(d ml.Data) (int, error) {
	c := d.C()
	n := d.Frame.Len()
	if v.mode == Spread {
		x := []float64{float64(n), -float64(n)}
		if err := c.AllReduce(x, ml.OpMax); err != nil {
			return 0, err
		}
		if x[0] != -x[1] {
			return 0, fmt.Errorf("%s: the spread distribution needs every rank to hold all the rows; ranks hold between %g and %g rows", v.name, -x[1], x[0])
		}
		return 0, nil
	}
	return ml.RowOffset(c, n)
}

// task is one fit: a grid point trained without a fold, scored on it.
type task struct{ fold, point int }

// run fits and scores every (fold, point) and refits the best point.
func (v *validator) run(d ml.Data, k int, assign split) (*outcome, error) {
	if err := v.check(); err != nil {
		return nil, err
	}
	if d.Frame == nil {
		return nil, fmt.Errorf("%s: no data", v.name)
	}
	c := d.C()
	off, err := v.rowOffset(d)
	if err != nil {
		return nil, err
	}
	n := d.Frame.Len()
	trainF, validF := makeFolds(d.Frame, k, off, assign)
	tasks := make([]task, 0, k*len(v.grid))
	for j := range k {
		for p := range v.grid {
			tasks = append(tasks, task{j, p})
		}
	}
	out := &outcome{metrics: make([][]float64, k)}
	for j := range out.metrics {
		out.metrics[j] = make([]float64, len(v.grid))
	}
	if v.collect {
		out.subModels = make([][]ml.Model, k)
		for j := range out.subModels {
			out.subModels[j] = make([]ml.Model, len(v.grid))
		}
	}
	// fit runs one task over comm tc on the given fold frames.
	fit := func(t task, tc ml.Comm) (float64, ml.Model, error) {
		e, err := v.grid[t.point].Apply(v.est)
		if err != nil {
			return 0, nil, fmt.Errorf("%s: grid point %d (%s): %w", v.name, t.point+1, v.grid[t.point], err)
		}
		m, err := e.Fit(ml.Data{Frame: trainF[t.fold], Comm: tc})
		if err != nil {
			return 0, nil, fmt.Errorf("%s: fold %d, grid point %d (%s): fit: %w", v.name, t.fold+1, t.point+1, v.grid[t.point], err)
		}
		pred, err := m.Transform(validF[t.fold])
		if err != nil {
			return 0, nil, fmt.Errorf("%s: fold %d, grid point %d (%s): transform: %w", v.name, t.fold+1, t.point+1, v.grid[t.point], err)
		}
		s, err := v.ev.Evaluate(pred, tc)
		if err != nil {
			return 0, nil, fmt.Errorf("%s: fold %d, grid point %d (%s): evaluate: %w", v.name, t.fold+1, t.point+1, v.grid[t.point], err)
		}
		return s, m, nil
	}
	record := func(t task, s float64, m ml.Model) {
		out.metrics[t.fold][t.point] = s
		if v.collect {
			out.subModels[t.fold][t.point] = m
		}
	}

	switch {
	case v.mode == DataParallel && c.Size() > 1:
		for _, t := range tasks {
			s, m, err := fit(t, c)
			if err != nil {
				return nil, err
			}
			record(t, s, m)
		}
	default:
		// Local fits: this rank's share of the tasks (all of them in one
		// process), Parallelism at a time.
		var mine []task
		for i, t := range tasks {
			if v.mode == DataParallel || i%c.Size() == c.Rank() {
				mine = append(mine, t)
			}
		}
		scores, models, errs := runWorkers(mine, v.parallelism, func(t task) (float64, ml.Model, error) { return fit(t, ml.Single) })
		var firstErr error
		for i, t := range mine {
			if errs[i] != nil {
				firstErr = errs[i]
				break
			}
			record(t, scores[i], models[i])
		}
		if v.mode == Spread && c.Size() > 1 {
			if err := v.shareScores(c, out, k, firstErr); err != nil {
				return nil, err
			}
		} else if firstErr != nil {
			return nil, firstErr
		}
	}

	out.avg = make([]float64, len(v.grid))
	for p := range v.grid {
		s := 0.0
		for j := range k {
			s += out.metrics[j][p]
		}
		out.avg[p] = s / float64(k)
	}
	out.best = bestIndex(out.avg, v.ev.LargerBetter())
	if out.best < 0 {
		return nil, fmt.Errorf("%s: every grid point scored NaN (%s)", v.name, v.ev.Metric())
	}

	e, err := v.grid[out.best].Apply(v.est)
	if err != nil {
		return nil, fmt.Errorf("%s: best grid point (%s): %w", v.name, v.grid[out.best], err)
	}
	all := d
	if v.mode == Spread && c.Size() > 1 {
		lo, hi := n*c.Rank()/c.Size(), n*(c.Rank()+1)/c.Size()
		all = ml.Partitioned(d.Frame.Slice(lo, hi), c)
	}
	if out.bestModel, err = e.Fit(all); err != nil {
		return nil, fmt.Errorf("%s: refit of the best grid point (%s) on all rows: %w", v.name, v.grid[out.best], err)
	}
	return out, nil
}

// makeFolds returns the training and validation frames of each of k
// folds of f, row i in fold assign(off+i). The folds are materialized
// once and shared by the fits (frames are immutable).
func makeFolds(f *data.Frame, k, off int, assign split) (trainF, validF []*data.Frame) {
	n := f.Len()
	train := make([][]int, k)
	valid := make([][]int, k)
	for i := range n {
		fi := assign(off + i)
		for j := range k {
			if j == fi {
				valid[j] = append(valid[j], i)
			} else {
				train[j] = append(train[j], i)
			}
		}
	}
	trainF = make([]*data.Frame, k)
	validF = make([]*data.Frame, k)
	for j := range k {
		trainF[j] = f.Take(train[j])
		validF[j] = f.Take(valid[j])
	}
	return trainF, validF
}

// shareScores gives every rank of a Spread search every score (each rank
// holds its own tasks' scores, zeros elsewhere, so a sum) and whether any
// rank failed; firstErr is this rank's failure.
func (v *validator) shareScores(c ml.Comm, out *outcome, k int, firstErr error) error {
	flat := make([]float64, 0, k*len(v.grid)+1)
	for _, row := range out.metrics {
		flat = append(flat, row...)
	}
	failed := 0.0
	if firstErr != nil {
		failed = 1
	}
	flat = append(flat, failed)
	if err := c.AllReduce(flat, ml.OpSum); err != nil {
		return err
	}
	if firstErr != nil {
		return firstErr
	}
	if flat[len(flat)-1] > 0 {
		return fmt.Errorf("%s: a fit failed on another rank (see its error)", v.name)
	}
	for j := range k {
		copy(out.metrics[j], flat[j*len(v.grid):(j+1)*len(v.grid)])
	}
	return nil
}

// bestIndex returns the index of the best score (the first of equal
// ones, as Spark's maxBy), NaN scores skipped; −1 if all are NaN.
func bestIndex(avg []float64, largerBetter bool) int {
	best := -1
	for i, s := range avg {
		if math.IsNaN(s) {
			continue
		}
		if best < 0 || (largerBetter && s > avg[best]) || (!largerBetter && s < avg[best]) {
			best = i
		}
	}
	return best
}

// runWorkers runs f on every task on at most par goroutines; results in
// task order.
func runWorkers(tasks []task, par int, f func(task) (float64, ml.Model, error)) ([]float64, []ml.Model, []error) {
	scores := make([]float64, len(tasks))
	models := make([]ml.Model, len(tasks))
	errs := make([]error, len(tasks))
	if par <= 1 {
		for i, t := range tasks {
			scores[i], models[i], errs[i] = safeCall(f, t)
			if errs[i] != nil {
				break
			}
		}
		return scores, models, errs
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(par, len(tasks)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				scores[i], models[i], errs[i] = safeCall(f, tasks[i])
			}
		}()
	}
	for i := range tasks {
		next <- i
	}
	close(next)
	wg.Wait()
	return scores, models, errs
}

// safeCall turns a panic in a fit on a worker goroutine into an error
// (a panic there would otherwise end the process without the caller's
// deferred clean-up).
func safeCall(f func(task) (float64, ml.Model, error), t task) (s float64, m ml.Model, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("fold %d, grid point %d: panic: %v", t.fold+1, t.point+1, r)
		}
	}()
	return f(t)
}

// rowHash mixes the seed and a global row index (SplitMix64's finalizer),
// so that the split of a row depends on nothing else — not on the number
// of ranks, nor on how the rows are spread over them.
func rowHash(seed int64, row int) uint64 {
	return mix64(mix64(uint64(seed)) ^ uint64(row))
}

func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// unitHash is rowHash as a number uniform in [0, 1).
func unitHash(seed int64, row int) float64 {
	return float64(rowHash(seed, row)>>11) / (1 << 53)
}

// RowUniform is the draw, uniform in [0, 1), that the validators use to
// split rows: a hash of seed and the row's global index (its position in
// the data set, every rank's rows in rank order). Other splits (a config's
// held-out test fraction) use it too, so that a row's side never depends
// on the number of ranks.
func RowUniform(seed int64, row int) float64 { return unitHash(seed, row) }
