package trials

import (
	"context"

	"github.com/fathom-ml/fathom/comm/join"
	"github.com/fathom-ml/fathom/comm/store"
)

// storePrefix is where a search's keys live in the job's store (itself
// under the restart generation's prefix, so a restarted search starts
// from an empty queue).
const storePrefix = "tune/"

// joinJob joins the job the environment describes (package comm/join):
// for several processes the group, which keeps every process of the
// search in the job, and the store the queue lives in; for one process
// the environment only.
func joinJob(ctx context.Context) (*join.Job, error) {
	return join.FromEnv(ctx, join.Options{Group: true, Store: true})
}

// searchStore is the search's part of st.
func searchStore(st store.Store) store.Store { return store.WithPrefix(st, storePrefix) }
