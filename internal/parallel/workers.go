package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The workers: long-lived helper goroutines, started on the first parallel call
// and grown when GOMAXPROCS grows, that take offers from one queue. A
// helper that ran part of a job polls the queue for the job's Spin before
// it blocks on it, so the next call of a chain of parallel calls (a
// training step is one) finds it awake.
//
// An offer names a Job and the generation of the Run that made it. A Job
// counts its active helpers and a closed flag in one atomic word, tagged
// with the generation, so that an offer taken after its Run has finished
// (or after the Job was reused) is dropped without touching the new run.

type offer struct {
	job *Job
	gen uint64
}

var (
	workersMu sync.Mutex
	helpers   atomic.Int32 // helper goroutines started
	queue     chan offer
)

// ensureHelpers starts helpers until there are at least n (and at least
// NumCPU-1 on first use).
func ensureHelpers(n int) {
	if int(helpers.Load()) >= n {
		return
	}
	workersMu.Lock()
	defer workersMu.Unlock()
	if queue == nil {
		// Enough room that offers are rarely refused even when nested
		// and concurrent calls pile up; a refused offer only means the
		// caller does that share itself.
		n = max(n, runtime.NumCPU()-1, 1)
		queue = make(chan offer, 4*max(n, runtime.NumCPU()))
	}
	for int(helpers.Load()) < n {
		helpers.Add(1)
		go helper()
	}
}

func helper() {
	var until time.Time // poll the queue until then
	for {
		o := nextOffer(until)
		if spin := o.job.help(o.gen); spin > 0 {
			until = later(until, time.Now().Add(spin))
		}
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// nextOffer returns the next offer from the queue, polling for it until
// the given time before blocking.
func nextOffer(until time.Time) offer {
	for i := 1; ; i++ {
		select {
		case o := <-queue:
			return o
		default:
		}
		if i%32 == 0 || i == 1 {
			if !time.Now().Before(until) {
				return <-queue
			}
			runtime.Gosched() // let other goroutines of this program run
		}
	}
}

// A Task is work that a caller and any number of helpers share by claiming
// pieces of it (from an atomic counter, say), so that it completes however
// many helpers join and whenever they do.
type Task interface {
	// RunPart claims and does pieces of the work until none is left.
	// Job.Run calls it with part 0 on its own goroutine and with distinct
	// parts 1, 2, ... below the requested count on helpers; a part may
	// never be called (no helper was free), and one that is called may
	// start after all the work is claimed and must then return. part lets
	// a task give each participant its own scratch space.
	RunPart(part int)
}

// A Job runs a Task on the calling goroutine and the idle helpers.
// It is a reusable fork-join record: a Job owned by a long-lived value (an
// optimizer, a GEMM variant) makes every call after the first allocation
// free. The zero Job is ready to use; a Job runs one task at a time.
type Job struct {
	// Spin is how long a helper that ran part of this job keeps polling
	// for the next offer before it blocks (0: it blocks at once). Waking a
	// blocked goroutine whose thread is asleep costs tens of microseconds
	// on a virtual machine (the idle core must be woken by the host), so
	// jobs that come in chains (the kernels of a training step) spin, as
	// OpenMP runtimes and BLAS thread pools do, for longer.
	Spin time.Duration
	// WaitSpin is how long the caller, done with its own part, polls for
	// its helpers to finish before it blocks (0: it blocks at once, which
	// leaves the core to them on a busy machine).
	WaitSpin time.Duration

	// state is gen<<genShift | closed | waiting | active: the run's
	// generation; set once the caller stops accepting helpers; set while
	// the caller sleeps on done; the helpers in RunPart.
	state atomic.Uint64
	gen   uint64
	task  Task
	part  atomic.Int32  // parts handed to helpers so far
	done  chan struct{} // receives when the last helper leaves while the caller sleeps
}

const (
	genShift   = 24
	closedBit  = 1 << 23
	waitingBit = 1 << 22
	activeMask = waitingBit - 1
)

// Run calls t.RunPart(0) on the calling goroutine and offers parts 1 to
// parts-1 to idle helpers, then returns when every RunPart call has
// returned. A helper that takes its offer late, after the caller finished
// its part, is turned away rather than waited for, so a helper the
// operating system has not scheduled yet (the machine may be shared)
// cannot hold up the call. With parts ≤ 1, or when no helper can be woken,
// the caller does all the work.
//
// Run is safe to call from inside RunPart of another job (nested
// parallelism) and from many goroutines at once on different Jobs.
func (j *Job) Run(parts int, t Task) {
	if parts <= 1 {
		t.RunPart(0)
		return
	}
	ensureHelpers(parts - 1)
	if j.done == nil {
		j.done = make(chan struct{}, 1)
	}
	j.gen++
	j.task = t
	j.part.Store(0)
	j.state.Store(j.gen << genShift)
	for range parts - 1 {
		select {
		case queue <- offer{j, j.gen}:
		default: // the queue is full: do that share here
		}
	}
	t.RunPart(0)
	// Close the run: no helper may join any more.
	if j.state.Or(closedBit)&activeMask != 0 {
		j.wait(j.WaitSpin)
	}
	j.task = nil
}

// wait returns when the helpers in the closed run have left, polling for
// up to spin before it sleeps. A caller that sees them leave while polling
// returns at once; only a sleeping caller is woken through done.
func (j *Job) wait(spin time.Duration) {
	var start time.Time
	for i := 1; spin > 0; i++ {
		if j.state.Load()&activeMask == 0 {
			return
		}
		if i%64 == 0 {
			if start.IsZero() {
				start = time.Now()
			} else if time.Since(start) > spin {
				break
			}
			runtime.Gosched()
		}
	}
	for {
		s := j.state.Load()
		if s&activeMask == 0 {
			return
		}
		if j.state.CompareAndSwap(s, s|waitingBit) {
			break
		}
	}
	// The helper that leaves last sees the waiting bit and sends.
	<-j.done
}

// help joins run gen of j, if it is still open, and runs a part. It
// returns the job's Spin, or 0 if it did not join.
func (j *Job) help(gen uint64) time.Duration {
	for {
		s := j.state.Load()
		if s>>genShift != gen&(1<<(64-genShift)-1) || s&closedBit != 0 {
			return 0 // that run is over or no longer takes helpers
		}
		if j.state.CompareAndSwap(s, s+1) {
			break
		}
	}
	j.task.RunPart(int(j.part.Add(1)))
	spin := j.Spin // read before leaving: then the caller may reuse j
	if s := j.state.Add(^uint64(0)); s&waitingBit != 0 && s&activeMask == 0 {
		j.done <- struct{}{}
	}
	return spin
}
