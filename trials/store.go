package trials

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/fathom-ml/fathom/comm/store"
)

// StoreQueue is the Queue of a job of several processes (`fathom run -n
// N`, several hosts): the trials are handed out by an atomic counter in
// the job's rendezvous store, so a worker that finishes early takes the
// next trial at once, and each result is set under its trial's key. Every
// process builds the same trial list (same flags and seed) and runs
// trials until the counter passes the end; rank 0 then Collects the
// results of all.
type StoreQueue struct {
	st     store.Store
	prefix string
	n      int
}

// NewStoreQueue returns a queue of n trials over st; prefix separates the
// keys of one search from anything else in the store.
func NewStoreQueue(st store.Store, prefix string, n int) *StoreQueue {
	return &StoreQueue{st: st, prefix: prefix, n: n}
}

// Next implements Queue.
func (q *StoreQueue) Next(ctx context.Context) (int, bool, error) {
	v, err := q.st.Add(ctx, q.prefix+"next", 1)
	if err != nil {
		return 0, false, err
	}
	i := int(v - 1)
	return i, i < q.n, nil
}

func (q *StoreQueue) resultKey(id int) string { return q.prefix + "result/" + strconv.Itoa(id) }

// Done implements Queue.
func (q *StoreQueue) Done(ctx context.Context, r Result) error {
	b, err := encodeResult(r)
	if err != nil {
		return err
	}
	return q.st.Set(ctx, q.resultKey(r.ID), b)
}

// Collect waits for the result of every trial (bounded by ctx) and
// returns them by ID.
func (q *StoreQueue) Collect(ctx context.Context) ([]Result, error) {
	out := make([]Result, q.n)
	for i := range q.n {
		b, err := q.st.Get(ctx, q.resultKey(i))
		if err != nil {
			return nil, fmt.Errorf("waiting for the result of trial %d: %w", i, err)
		}
		if out[i], err = decodeResult(b); err != nil || out[i].ID != i {
			return nil, fmt.Errorf("trial %d: malformed result in the store (%v)", i, err)
		}
	}
	return out, nil
}

// AnnounceBest tells every process which trial is best (-1: none): rank 0
// calls it after Collect.
func (q *StoreQueue) AnnounceBest(ctx context.Context, id int) error {
	return q.st.Set(ctx, q.prefix+"best", []byte(strconv.Itoa(id)))
}

// WaitBest returns the trial AnnounceBest named.
func (q *StoreQueue) WaitBest(ctx context.Context) (int, error) {
	b, err := q.st.Get(ctx, q.prefix+"best")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(string(b))
}

// MaxModelBytes is the largest model file SendModel carries (the store's
// bound on a value).
const MaxModelBytes = 1 << 24

// SendModel hands the best trial's model file (read by the process that
// ran it) to rank 0; an empty data with a message reports that it could
// not be read.
func (q *StoreQueue) SendModel(ctx context.Context, data []byte, problem string) error {
	if problem != "" || len(data) >= MaxModelBytes {
		if problem == "" {
			problem = fmt.Sprintf("the model file has %d bytes, more than the store carries (%d)", len(data), MaxModelBytes)
		}
		return q.st.Set(ctx, q.prefix+"model", append([]byte{0}, problem...))
	}
	return q.st.Set(ctx, q.prefix+"model", append([]byte{1}, data...))
}

// ReceiveModel returns what SendModel sent.
func (q *StoreQueue) ReceiveModel(ctx context.Context) ([]byte, error) {
	b, err := q.st.Get(ctx, q.prefix+"model")
	if err != nil {
		return nil, err
	}
	if len(b) == 0 || b[0] != 1 {
		if len(b) > 0 {
			b = b[1:]
		}
		return nil, fmt.Errorf("best model: %s", b)
	}
	return b[1:], nil
}

// Rungs returns the ASHA records of this search in the store, shared by
// every process.
func (q *StoreQueue) Rungs() RungStore { return &storeRungs{q: q, seen: map[int][]float64{}} }

// storeRungs keeps each rung's records as a counter and one key per
// record; the records read are cached.
type storeRungs struct {
	q    *StoreQueue
	mu   sync.Mutex
	seen map[int][]float64
}

func (s *storeRungs) Record(ctx context.Context, rung int, value float64) ([]float64, error) {
	base := s.q.prefix + "rung/" + strconv.Itoa(rung) + "/"
	// One record at a time in this process, from its count to its reads:
	// the cache then grows in order, and no read here waits (holding the
	// store connection, which the trials of a process share) for a
	// record that another trial of this process has counted but not yet
	// written, which would wait for the connection in turn.
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.q.st.Add(ctx, base+"n", 1)
	if err != nil {
		return nil, err
	}
	if err := s.q.st.Set(ctx, base+strconv.FormatInt(n-1, 10), binary.LittleEndian.AppendUint64(nil, math.Float64bits(value))); err != nil {
		return nil, err
	}
	for j := int64(len(s.seen[rung])); j < n; j++ {
		b, err := s.q.st.Get(ctx, base+strconv.FormatInt(j, 10))
		if err != nil {
			return nil, err
		}
		if len(b) != 8 {
			return nil, fmt.Errorf("rung %d record %d: %d bytes", rung, j, len(b))
		}
		s.seen[rung] = append(s.seen[rung], math.Float64frombits(binary.LittleEndian.Uint64(b)))
	}
	return slices.Clone(s.seen[rung][:n]), nil
}

// Result returns trial id's result if it is in the store by the end of
// ctx (a short deadline polls): rank 0's dashboard shows the other
// processes' trials as they finish.
func (q *StoreQueue) Result(ctx context.Context, id int) (Result, bool) {
	b, err := q.st.Get(ctx, q.resultKey(id))
	if err != nil {
		return Result{}, false
	}
	r, err := decodeResult(b)
	return r, err == nil && r.ID == id
}
