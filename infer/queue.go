package infer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fathom-ml/fathom/comm/store"
	"github.com/fathom-ml/fathom/comm/workqueue"
)

// errorsCounter is the queue's counter of the job's failed rows.
const errorsCounter = "errors"

// Shared is a prediction shared by the workers of a distributed job
// through the job's store (package comm/join's Job.Store): the work queue
// (a workqueue.Store) that hands each partition to the first free worker
// and counts the job's failed rows, the check that every worker lists the
// same partitions, and the workers' summaries. Keys live under a prefix of
// the output directory (the job's store already separates restart
// generations), so a second prediction in the same job starts a fresh
// queue; the outputs already complete on disk are what makes a re-run
// skip work.
type Shared struct {
	q          *workqueue.Store
	rank, size int
}

// NewShared returns the prediction into out (as given on every worker's
// command line) of n partitions in st, for the worker rank of size.
func NewShared(st store.Store, out string, n, rank, size int) *Shared {
	return &Shared{q: workqueue.NewStore(store.WithPrefix(st, "infer/"+QueueKey(out)+"/"), n), rank: rank, size: size}
}

// QueueKey names the queue of a prediction into out.
func QueueKey(out string) string {
	h := sha256.Sum256([]byte(filepath.Clean(out)))
	return hex.EncodeToString(h[:8])
}

// Queue returns the work queue, for Options.Queue.
func (s *Shared) Queue() workqueue.Queue { return s.q }

// Agree checks that every worker lists the same partitions as rank 0
// (the queue hands out indices into the listing).
func (s *Shared) Agree(ctx context.Context, parts []Partition) error {
	names := make([]string, len(parts))
	for i, p := range parts {
		names[i] = p.Path
	}
	err := s.q.Agree(ctx, s.rank, names)
	if le := (*workqueue.ListingError)(nil); errors.As(err, &le) {
		return fmt.Errorf("infer: rank %d lists %d partitions, rank 0 lists %d (or other files): every worker must see the same inputs", s.rank, len(parts), le.Rank0Len)
	}
	if err != nil {
		return fmt.Errorf("infer: %w", err)
	}
	return nil
}

// Finish publishes this worker's summary (runErr: its failure, if any;
// the queue then hands out nothing more, to any worker).
func (s *Shared) Finish(ctx context.Context, sum Summary, runErr error) error {
	msg := doneMsg{Summary: sum}
	if runErr != nil {
		msg.Err = runErr.Error()
		if err := s.q.Stop(ctx); err != nil {
			return err
		}
	}
	b, _ := json.Marshal(msg)
	return s.q.Set(ctx, "done/"+strconv.Itoa(s.rank), b)
}

type doneMsg struct {
	Summary Summary `json:"summary"`
	Err     string  `json:"error,omitempty"`
}

// Gather waits for every worker's summary (rank 0 calls it after its own
// Finish) and returns their sum; a worker's failure is returned as an
// error naming its rank.
func (s *Shared) Gather(ctx context.Context) (Summary, error) {
	var total Summary
	var errs []string
	for r := range s.size {
		b, err := s.q.Get(ctx, "done/"+strconv.Itoa(r))
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
