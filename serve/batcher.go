package serve

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fathom-ml/fathom/modelfile"
)

// Sentinel errors of the batcher; the HTTP layer maps them to status codes.
var (
	// ErrQueueFull: the model's queue holds as many requests as it may.
	ErrQueueFull = errors.New("the model's request queue is full")
	// ErrShuttingDown: the server is stopping and takes no new requests.
	ErrShuttingDown = errors.New("the server is shutting down")
)

// job is one request's rows waiting for a batch.
type job struct {
	ctx  context.Context
	x    []float32 // rows × the model's features, raw
	rows int
	done chan result // buffered: the batcher never waits on a caller
}

// result is a job's share of a batch's predictions (or the batch's error).
type result struct {
	pred *modelfile.Predictions
	err  error
}

// batcher merges the requests of one model into batches: one goroutine
// takes the first waiting job, then gathers more until the batch holds
// maxBatch rows or maxDelay has passed since it took the first (with no
// delay: until the queue is empty), runs one PredictRows over all their
// rows and hands each job its own rows' predictions. The queue is a
// channel of fixed capacity: a full queue refuses new jobs instead of
// growing.
//
// Only the batcher goroutine calls the model: a model's batches run one
// at a time.
type batcher struct {
	model    *modelfile.Model
	features int
	maxBatch int
	maxDelay time.Duration
	queue    chan *job
	stop     chan struct{} // closed: finish the queue and exit
	stopOnce sync.Once
	done     chan struct{} // closed when the goroutine has exited

	// observe, if set, is told each batch's rows and predict time.
	observe func(rows int, d time.Duration)
	// beforePredict, if set, runs before each batch (a test hook).
	beforePredict func()
}

func newBatcher(m *modelfile.Model, features, maxBatch int, maxDelay time.Duration, queue int) *batcher {
	return &batcher{model: m, features: features, maxBatch: maxBatch, maxDelay: maxDelay,
		queue: make(chan *job, queue), stop: make(chan struct{}), done: make(chan struct{})}
}

// submit queues a job without waiting; ErrQueueFull if there is no room.
func (b *batcher) submit(j *job) error {
	select {
	case <-b.stop:
		return ErrShuttingDown
	default:
	}
	select {
	case b.queue <- j:
		return nil
	default:
		return ErrQueueFull
	}
}

// depth is the number of queued jobs.
func (b *batcher) depth() int { return len(b.queue) }

// close asks the goroutine to finish the jobs already queued and exit.
func (b *batcher) close() { b.stopOnce.Do(func() { close(b.stop) }) }

// run is the batcher goroutine.
func (b *batcher) run() {
	defer close(b.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var carry *job // a job that did not fit the last batch: it opens the next
	batch := make([]*job, 0, b.maxBatch)
	for {
		first := carry
		carry = nil
		if first == nil {
			select {
			case first = <-b.queue:
			case <-b.stop:
				b.drain()
				return
			}
		}
		batch = append(batch[:0], first)
		if first.rows < b.maxBatch {
			carry = b.gather(&batch, first.rows, timer)
		}
		b.predict(batch)
		clear(batch)
	}
}

// gather adds queued jobs to batch, which holds rows rows, until it holds
// maxBatch rows, the queue delay has passed or (with no delay) the queue
// is empty. A job that would overflow the batch is returned to open the
// next one.
func (b *batcher) gather(batch *[]*job, rows int, timer *time.Timer) *job {
	var expired <-chan time.Time // nil: no delay, take only what is queued
	if b.maxDelay > 0 {
		timer.Reset(b.maxDelay)
		defer timer.Stop()
		expired = timer.C
	}
	for rows < b.maxBatch {
		var j *job
		if expired == nil {
			select {
			case j = <-b.queue:
			default:
				return nil
			}
		} else {
			select {
			case j = <-b.queue:
			case <-expired:
				return nil
			case <-b.stop:
				return nil // shutting down: run what we have without waiting
			}
		}
		if rows+j.rows > b.maxBatch {
			return j
		}
		*batch = append(*batch, j)
		rows += j.rows
	}
	return nil
}

// drain answers the jobs still queued at stop: it runs them (the server
// stops batchers only after its handlers have finished, so normally none
// is left).
func (b *batcher) drain() {
	for {
		select {
		case j := <-b.queue:
			b.predict([]*job{j})
		default:
			return
		}
	}
}

// predict runs one batch and answers each of its jobs. Jobs whose caller
// has given up (timeout, closed connection) are left out.
func (b *batcher) predict(batch []*job) {
	live := batch[:0] // filtered in place: run clears batch afterwards
	n := 0
	for _, j := range batch {
		if j.ctx.Err() != nil {
			j.done <- result{err: j.ctx.Err()}
			continue
		}
		live = append(live, j)
		n += j.rows
	}
	if len(live) == 0 {
		return
	}
	if b.beforePredict != nil {
		b.beforePredict()
	}
	var x []float32
	if len(live) == 1 {
		x = live[0].x
	} else {
		x = getRows(n * b.features)
		for _, j := range live {
			x = append(x, j.x...)
		}
		defer putRows(x)
	}
	start := time.Now()
	p, err := b.safePredict(x, n)
	if err == nil && p.Rows() != n {
		err = fmt.Errorf("the model returned %d predictions for %d rows", p.Rows(), n)
	}
	if b.observe != nil {
		b.observe(n, time.Since(start))
	}
	if err != nil {
		for _, j := range live {
			j.done <- result{err: err}
		}
		return
	}
	at := 0
	for _, j := range live {
		j.done <- result{pred: slicePredictions(p, at, at+j.rows)}
		at += j.rows
	}
}

// safePredict runs the model, turning a panic inside it (a programmer
// error in a layer) into an error for this batch instead of a crash of
// the server.
func (b *batcher) safePredict(x []float32, rows int) (p *modelfile.Predictions, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("the model panicked: %v", r)
		}
	}()
	return b.model.PredictRows(x, rows)
}

// slicePredictions returns rows [lo, hi) of p, sharing its storage.
func slicePredictions(p *modelfile.Predictions, lo, hi int) *modelfile.Predictions {
	q := &modelfile.Predictions{Task: p.Task, Classes: p.Classes}
	if p.Values != nil {
		q.Values = p.Values[lo:hi:hi]
	}
	if p.Class != nil {
		c := len(p.Classes)
		q.Class = p.Class[lo:hi:hi]
		q.Probs = p.Probs[lo*c : hi*c : hi*c]
	}
	return q
}
