package workqueue

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strconv"
	"sync"

	"github.com/fathom-ml/fathom/comm/store"
)

// Queue hands out the items 0..n-1 of a job, each once, to whichever
// worker asks first, and keeps what the workers report: each item's
// result and the job's counters. Local serves the workers of one process,
// Store those of every process of a job.
type Queue interface {
	// Claim returns the next item to do, or ok false once every item has
	// been handed out or the queue was stopped.
	Claim(ctx context.Context) (i int, ok bool, err error)
	// Done records item i's result.
	Done(ctx context.Context, i int, result []byte) error
	// Add adds delta to the job's counter name (created at 0) and returns
	// the new value.
	Add(ctx context.Context, name string, delta int64) (int64, error)
	// Stop hands out no more items, to any worker (one has failed: the
	// job ends).
	Stop(ctx context.Context) error
}

// Local is the Queue of the workers of one process; safe for concurrent
// use.
type Local struct {
	mu       sync.Mutex
	n, next  int
	stopped  bool
	results  map[int][]byte
	counters map[string]int64
}

// NewLocal returns a queue of n items.
func NewLocal(n int) *Local {
	return &Local{n: n, results: map[int][]byte{}, counters: map[string]int64{}}
}

// Claim implements Queue.
func (q *Local) Claim(context.Context) (int, bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped || q.next >= q.n {
		return 0, false, nil
	}
	q.next++
	return q.next - 1, true, nil
}

// Done implements Queue.
func (q *Local) Done(_ context.Context, i int, result []byte) error {
	if i < 0 || i >= q.n {
		return fmt.Errorf("workqueue: result of item %d of %d", i, q.n)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.results[i] = append([]byte(nil), result...)
	return nil
}

// Result returns item i's result, if it is done.
func (q *Local) Result(i int) ([]byte, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	b, ok := q.results[i]
	return b, ok
}

// Add implements Queue.
func (q *Local) Add(_ context.Context, name string, delta int64) (int64, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.counters[name] += delta
	return q.counters[name], nil
}

// Stop implements Queue.
func (q *Local) Stop(context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.stopped = true
	return nil
}

// Store is the Queue of the workers of a distributed job, kept in the
// job's store (package comm/store): an atomic counter every worker adds
// one to for its next item, so that items go to the first free worker
// and a slow one holds nobody up; each item's result under a key of its
// own; the job's counters; and named values the workers publish to each
// other (a summary, the best trial).
//
// The caller gives the queue its namespace (store.WithPrefix): the job's
// store from package comm/join already separates restart generations, and
// a prefix of the caller's separates two queues of one job.
//
// Every method is one or a few requests on st's connection, bounded by
// ctx. A Get that ends at its deadline before the key is set leaves its
// answer owed on that connection, which the next request waits for: a
// goroutine that polls with short deadlines (Result) should have a client
// of its own (join.Job.DialStore).
type Store struct {
	st store.Store
	n  int
}

// NewStore returns the queue of n items in st.
func NewStore(st store.Store, n int) *Store { return &Store{st: st, n: n} }

// Len returns the number of items.
func (q *Store) Len() int { return q.n }

// Claim implements Queue; it hands out nothing more once Stop was
// called (by any worker).
func (q *Store) Claim(ctx context.Context) (int, bool, error) {
	stopped, err := q.st.Add(ctx, "stopped", 0)
	if err != nil {
		return 0, false, err
	}
	if stopped > 0 {
		return 0, false, nil
	}
	v, err := q.st.Add(ctx, "next", 1)
	if err != nil {
		return 0, false, err
	}
	if v > int64(q.n) {
		return 0, false, nil
	}
	return int(v - 1), true, nil
}

func resultKey(i int) string { return "result/" + strconv.Itoa(i) }

// Done implements Queue.
func (q *Store) Done(ctx context.Context, i int, result []byte) error {
	if i < 0 || i >= q.n {
		return fmt.Errorf("workqueue: result of item %d of %d", i, q.n)
	}
	return q.st.Set(ctx, resultKey(i), result)
}

// Result waits (bounded by ctx) for item i's result, whichever worker
// did it.
func (q *Store) Result(ctx context.Context, i int) ([]byte, error) {
	return q.st.Get(ctx, resultKey(i))
}

// Collect waits (bounded by ctx) for the result of every item and returns
// them by item.
func (q *Store) Collect(ctx context.Context) ([][]byte, error) {
	out := make([][]byte, q.n)
	for i := range q.n {
		b, err := q.Result(ctx, i)
		if err != nil {
			return nil, fmt.Errorf("waiting for the result of item %d: %w", i, err)
		}
		out[i] = b
	}
	return out, nil
}

// Add implements Queue.
func (q *Store) Add(ctx context.Context, name string, delta int64) (int64, error) {
	return q.st.Add(ctx, "count/"+name, delta)
}

// Stop implements Queue.
func (q *Store) Stop(ctx context.Context) error {
	_, err := q.st.Add(ctx, "stopped", 1)
	return err
}

// Set publishes value under name to every worker.
func (q *Store) Set(ctx context.Context, name string, value []byte) error {
	return q.st.Set(ctx, "value/"+name, value)
}

// Get waits (bounded by ctx) for the value published under name.
func (q *Store) Get(ctx context.Context, name string) ([]byte, error) {
	return q.st.Get(ctx, "value/"+name)
}

// ListingError says that a worker lists other items than rank 0.
type ListingError struct {
	Rank            int // the worker that disagrees
	Items, Rank0Len int // the lengths of its listing and of rank 0's
}

func (e *ListingError) Error() string {
	return fmt.Sprintf("workqueue: rank %d lists %d items, rank 0 lists %d (or others): every worker must list the same items", e.Rank, e.Items, e.Rank0Len)
}

// Agree checks that every worker lists the same items as rank 0 (the
// queue hands out indices into the listing): rank 0 publishes a hash of
// its names, the others wait for it and compare theirs; a worker that
// disagrees gets a *ListingError.
func (q *Store) Agree(ctx context.Context, rank int, names []string) error {
	h := sha256.New()
	for _, s := range names {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	mine := fmt.Sprintf("%d %x", len(names), h.Sum(nil)[:8])
	if rank == 0 {
		return q.st.Set(ctx, "listing", []byte(mine))
	}
	b, err := q.st.Get(ctx, "listing")
	if err != nil {
		return fmt.Errorf("workqueue: rank %d: waiting for rank 0's listing: %w", rank, err)
	}
	if string(b) != mine {
		var n int
		fmt.Sscan(string(b), &n)
		return &ListingError{Rank: rank, Items: len(names), Rank0Len: n}
	}
	return nil
}
