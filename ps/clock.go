package ps

// Clock is the stale-synchronous-parallel bound of an asynchronous server
// (Ho et al., "More Effective Distributed ML via a Stale Synchronous
// Parallel Parameter Server", NIPS 2013): worker w's clock is the number
// of gradients it has pushed, and a worker about to compute step t may
// read the parameters only when t − (the slowest live worker's clock) ≤
// Staleness. Staleness 0 keeps every worker in lock-step (each waits
// until all have pushed the step before), a large one lets them run
// free. A worker that finished or was lost leaves the bound. Clock is
// pure logic: the server calls it under its lock.
type Clock struct {
	Staleness int
	clocks    []int
	gone      []bool
}

// NewClock returns the clock of workers workers, all at 0.
func NewClock(workers, staleness int) *Clock {
	return &Clock{Staleness: staleness, clocks: make([]int, workers), gone: make([]bool, workers)}
}

// Push counts one gradient of worker w.
func (c *Clock) Push(w int) { c.clocks[w]++ }

// Of returns worker w's clock.
func (c *Clock) Of(w int) int { return c.clocks[w] }

// Leave takes worker w out of the bound (finished or lost).
func (c *Clock) Leave(w int) { c.gone[w] = true }

// Gone reports whether worker w left.
func (c *Clock) Gone(w int) bool { return c.gone[w] }

// Min returns the clock of the slowest worker still in the bound, and
// false when none is.
func (c *Clock) Min() (int, bool) {
	m, any := 0, false
	for w, t := range c.clocks {
		if c.gone[w] {
			continue
		}
		if !any || t < m {
			m, any = t, true
		}
	}
	return m, any
}

// Ready reports whether a worker may read the parameters for step
// (0-based): step − Min() ≤ Staleness.
func (c *Clock) Ready(step int) bool {
	m, any := c.Min()
	return !any || step-m <= c.Staleness
}

// Live returns the number of workers still in the bound.
func (c *Clock) Live() int {
	n := 0
	for _, g := range c.gone {
		if !g {
			n++
		}
	}
	return n
}
