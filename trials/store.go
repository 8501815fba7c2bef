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
	"github.com/fathom-ml/fathom/comm/workqueue"
)

// Shared is a search shared by the processes of a job (`fathom run -n
// N`, several hosts) through the job's store (package comm/join's
// Job.Store): the work queue (a workqueue.Store) whose atomic counter
// hands the next trial to whichever worker asks, so a worker that
// finishes early takes the next trial at once; each trial's result under
// its own key; the best trial and its model; ASHA's rungs. Every process
// builds the same trial list (same flags and seed), runs trials from
// Queue until it is empty, and rank 0 then Collects the results of all.
type Shared struct {
	q *workqueue.Store
}

// NewShared returns the search of n trials in st (keys under "trials/";
// the job's store already separates restart generations).
func NewShared(st store.Store, n int) *Shared {
	return &Shared{q: workqueue.NewStore(store.WithPrefix(st, "trials/"), n)}
}

// Queue returns the work queue, for Options.Queue.
func (s *Shared) Queue() workqueue.Queue { return s.q }

// Collect waits for the result of every trial (bounded by ctx) and
// returns them by ID.
func (s *Shared) Collect(ctx context.Context) ([]Result, error) {
	bs, err := s.q.Collect(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Result, len(bs))
	for i, b := range bs {
		if out[i], err = decodeResult(b); err != nil || out[i].ID != i {
			return nil, fmt.Errorf("trial %d: malformed result in the store (%v)", i, err)
		}
	}
	return out, nil
}

// Result returns trial id's result if it is in the store by the end of
// ctx: rank 0's dashboard shows the other processes' trials as they
// finish. A short deadline polls; the poller then needs a store client
// of its own (join.Job.DialStore), as an abandoned request holds up the
// next one on its connection.
func (s *Shared) Result(ctx context.Context, id int) (Result, bool) {
	b, err := s.q.Result(ctx, id)
	if err != nil {
		return Result{}, false
	}
	r, err := decodeResult(b)
	return r, err == nil && r.ID == id
}

// AnnounceBest tells every process which trial is best (-1: none): rank 0
// calls it after Collect.
func (s *Shared) AnnounceBest(ctx context.Context, id int) error {
	return s.q.Set(ctx, "best", []byte(strconv.Itoa(id)))
}

// WaitBest returns the trial AnnounceBest named.
func (s *Shared) WaitBest(ctx context.Context) (int, error) {
	b, err := s.q.Get(ctx, "best")
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
func (s *Shared) SendModel(ctx context.Context, data []byte, problem string) error {
	if problem != "" || len(data) >= MaxModelBytes {
		if problem == "" {
			problem = fmt.Sprintf("the model file has %d bytes, more than the store carries (%d)", len(data), MaxModelBytes)
		}
		return s.q.Set(ctx, "model", append([]byte{0}, problem...))
	}
	return s.q.Set(ctx, "model", append([]byte{1}, data...))
}

// ReceiveModel returns what SendModel sent.
func (s *Shared) ReceiveModel(ctx context.Context) ([]byte, error) {
	b, err := s.q.Get(ctx, "model")
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
func (s *Shared) Rungs() RungStore { return &storeRungs{q: s.q, seen: map[int][]float64{}} }

// storeRungs keeps each rung's records as a counter of the queue and one
// published value per record; the records read are cached.
type storeRungs struct {
	q    *workqueue.Store
	mu   sync.Mutex
	seen map[int][]float64
}

func (s *storeRungs) Record(ctx context.Context, rung int, value float64) ([]float64, error) {
	base := "rung/" + strconv.Itoa(rung) + "/"
	// One record at a time in this process, from its count to its reads:
	// the cache then grows in order, and no read here waits (holding the
	// store connection, which the trials of a process share) for a
	// record that another trial of this process has counted but not yet
	// written, which would wait for the connection in turn.
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.q.Add(ctx, base+"n", 1)
	if err != nil {
		return nil, err
	}
	if err := s.q.Set(ctx, base+strconv.FormatInt(n-1, 10), binary.LittleEndian.AppendUint64(nil, math.Float64bits(value))); err != nil {
		return nil, err
	}
	for j := int64(len(s.seen[rung])); j < n; j++ {
		b, err := s.q.Get(ctx, base+strconv.FormatInt(j, 10))
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
