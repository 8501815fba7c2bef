package infer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fathom-ml/fathom/comm/store"
	"github.com/fathom-ml/fathom/internal/distenv"
)

// Queue hands out partitions to the workers of a job: each index once,
// to whichever worker asks first, so a slow worker takes fewer and a fast
// one more, and keeps the job's count of failed rows.
type Queue interface {
	// Claim returns the index of the next partition to do, or ok false
	// when every partition has been handed out.
	Claim(ctx context.Context) (i int, ok bool, err error)
	// AddErrors adds n failed rows to the job's count and returns the
	// new total.
	AddErrors(ctx context.Context, n int64) (int64, error)
}

// LocalQueue is the Queue of a single process.
type LocalQueue struct {
	mu     sync.Mutex
	n      int
	next   int
	errors int64
}

// NewLocalQueue returns a queue of n partitions.
func NewLocalQueue(n int) *LocalQueue { return &LocalQueue{n: n} }

// Claim implements Queue.
func (q *LocalQueue) Claim(context.Context) (int, bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.next >= q.n {
		return 0, false, nil
	}
	q.next++
	return q.next - 1, true, nil
}

// AddErrors implements Queue.
func (q *LocalQueue) AddErrors(_ context.Context, n int64) (int64, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.errors += n
	return q.errors, nil
}

// StoreQueue is the Queue of the workers of a distributed job, kept in
// the job's store (package comm/store): a counter every worker adds one to
// for its next partition, so that partitions go to the first free worker.
// Keys live under a prefix of the job's restart generation and of the
// output directory, so a restarted job or a second prediction in the same
// job starts a fresh queue; the outputs already complete on disk are what
// makes a re-run skip work.
type StoreQueue struct {
	st   store.Store
	n    int
	rank int
	size int
}

// NewStoreQueue returns the queue of n partitions in st for the worker
// rank of size; key distinguishes predictions sharing one store (use
// QueueKey).
func NewStoreQueue(st store.Store, key string, n, rank, size int) *StoreQueue {
	return &StoreQueue{st: store.WithPrefix(st, "infer/"+key+"/"), n: n, rank: rank, size: size}
}

// QueueKey names the queue of a prediction into out (as given on every
// worker's command line).
func QueueKey(out string) string {
	h := sha256.Sum256([]byte(filepath.Clean(out)))
	return hex.EncodeToString(h[:8])
}

// Agree checks that every worker lists the same partitions as rank 0
// (the queue hands out indices into the listing): rank 0 publishes a hash
// of its listing, the others compare theirs with it.
func (q *StoreQueue) Agree(ctx context.Context, parts []Partition) error {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p.Path))
		h.Write([]byte{0})
	}
	mine := fmt.Sprintf("%d %x", len(parts), h.Sum(nil)[:8])
	if q.rank == 0 {
		return q.st.Set(ctx, "listing", []byte(mine))
	}
	b, err := q.st.Get(ctx, "listing")
	if err != nil {
		return fmt.Errorf("infer: rank %d: waiting for rank 0's listing of the partitions: %w", q.rank, err)
	}
	if string(b) != mine {
		var n int
		fmt.Sscan(string(b), &n)
		return fmt.Errorf("infer: rank %d lists %d partitions, rank 0 lists %d (or other files): every worker must see the same inputs", q.rank, len(parts), n)
	}
	return nil
}

// Claim implements Queue; it hands out nothing more once a worker has
// failed.
func (q *StoreQueue) Claim(ctx context.Context) (int, bool, error) {
	failed, err := q.st.Add(ctx, "failed", 0)
	if err != nil {
		return 0, false, fmt.Errorf("infer: rank %d: claiming a partition: %w", q.rank, err)
	}
	if failed > 0 {
		return 0, false, nil // a worker failed: the job ends
	}
	v, err := q.st.Add(ctx, "next", 1)
	if err != nil {
		return 0, false, fmt.Errorf("infer: rank %d: claiming a partition: %w", q.rank, err)
	}
	if v > int64(q.n) {
		return 0, false, nil
	}
	return int(v - 1), true, nil
}

// AddErrors implements Queue.
func (q *StoreQueue) AddErrors(ctx context.Context, n int64) (int64, error) {
	v, err := q.st.Add(ctx, "errors", n)
	if err != nil {
		return 0, fmt.Errorf("infer: rank %d: counting errors: %w", q.rank, err)
	}
	return v, nil
}

// Finish publishes this worker's summary (err: its failure, if any).
func (q *StoreQueue) Finish(ctx context.Context, s Summary, runErr error) error {
	msg := doneMsg{Summary: s}
	if runErr != nil {
		msg.Err = runErr.Error()
		if _, err := q.st.Add(ctx, "failed", 1); err != nil {
			return err
		}
	}
	b, _ := json.Marshal(msg)
	return q.st.Set(ctx, "done/"+strconv.Itoa(q.rank), b)
}

type doneMsg struct {
	Summary Summary `json:"summary"`
	Err     string  `json:"error,omitempty"`
}

// Gather waits for every worker's summary (rank 0 calls it after its own
// Finish) and returns their sum; a worker's failure is returned as an
// error naming its rank.
func (q *StoreQueue) Gather(ctx context.Context) (Summary, error) {
	var total Summary
	var errs []string
	for r := range q.size {
		b, err := q.st.Get(ctx, "done/"+strconv.Itoa(r))
		if err != nil {
			return total, fmt.Errorf("infer: waiting for rank %d to finish: %w", r, err)
		}
		var m doneMsg
		if err := json.Unmarshal(b, &m); err != nil {
			return total, fmt.Errorf("infer: rank %d sent a malformed summary: %v", r, err)
		}
		if total.Out == "" {
			total.Out = m.Summary.Out
		}
		total.Add(m.Summary)
		if m.Err != "" {
			errs = append(errs, fmt.Sprintf("rank %d: %s", r, m.Err))
		}
	}
	if len(errs) > 0 {
		return total, fmt.Errorf("infer: %s", strings.Join(errs, "; "))
	}
	return total, nil
}

// Job is this process's place in a distributed prediction, from the
// environment `fathom run` (or torchrun) sets.
type Job struct {
	Rank, Size int
	// Store is the job's store, under the restart generation's prefix.
	Store  store.Store
	server *store.Server
	client *store.Client
}

// JoinFromEnv joins the job the environment describes: nil when it names
// a single worker (WORLD_SIZE unset or 1). Rank 0 hosts the store on
// MASTER_ADDR:MASTER_PORT unless the launcher does
// (FATHOM_STORE_HOSTED=1); every worker connects with the job token.
func JoinFromEnv(ctx context.Context, logger *slog.Logger) (*Job, error) {
	e, err := distenv.FromOS()
	if err != nil {
		return nil, err
	}
	if e.WorldSize <= 1 {
		return nil, nil
	}
	if e.JobToken == "" {
		return nil, fmt.Errorf("infer: rank %d: %s is not set (fathom run sets it)", e.Rank, distenv.JobToken)
	}
	if logger == nil {
		logger = slog.Default()
	}
	j := &Job{Rank: e.Rank, Size: e.WorldSize}
	addr := net.JoinHostPort(e.MasterAddr, strconv.Itoa(e.MasterPort))
	if e.Rank == 0 && !e.StoreHosted {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("infer: rank 0 cannot host the store on %s: %w", addr, err)
		}
		j.server = store.Serve(ln, []byte(e.JobToken), logger)
	}
	dctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	c, err := store.Dial(dctx, addr, []byte(e.JobToken), e.Rank)
	if err != nil {
		j.Close()
		return nil, fmt.Errorf("infer: rank %d: %w", e.Rank, err)
	}
	j.client = c
	j.Store = c
	if e.RestartCount > 0 {
		j.Store = store.WithPrefix(c, "g"+strconv.Itoa(e.RestartCount)+"/")
	}
	return j, nil
}

// Close disconnects; rank 0 waits (a little) for the others to be done
// with the store it hosts before closing it.
func (j *Job) Close() error {
	if j.client != nil {
		j.client.Close()
	}
	if j.server != nil {
		j.server.WaitIdle(10 * time.Second)
		return j.server.Close()
	}
	return nil
}
