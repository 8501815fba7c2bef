package trials

import (
	"github.com/fathom-ml/fathom/comm/store"
	"github.com/fathom-ml/fathom/comm/workqueue"
)

// StoreQueue is a Shared search under a key prefix of the caller's, for
// callers that dial the job's store themselves and so add the restart
// generation's prefix on their own. It is a Shared and its queue in one
// value.
//
// Deprecated: join the job with package comm/join and use
// NewShared(job.Store, n), with Shared.Queue as Options.Queue.
type StoreQueue struct {
	*Shared
	workqueue.Queue
}

// NewStoreQueue returns the search of n trials in st under prefix.
//
// Deprecated: use NewShared.
func NewStoreQueue(st store.Store, prefix string, n int) *StoreQueue {
	s := NewShared(store.WithPrefix(st, prefix), n)
	return &StoreQueue{Shared: s, Queue: s.Queue()}
}
