// Package workqueue is the one work queue of fathom's jobs: it hands out
// the items of a job (the partitions of a batch prediction, the trials of
// a search) each once to whichever worker asks first, so a fast worker
// takes more and a slow or restarted one holds nobody up, and it keeps the
// workers' reports (each item's result, the job's counters, values they
// publish to each other).
//
// Local serves the workers (goroutines) of one process; Store serves
// every process of a distributed job through the job's store (package
// comm/store, joined with package comm/join):
//
//	j, err := join.FromEnv(ctx, join.Options{Store: true})
//	...
//	q := workqueue.NewStore(store.WithPrefix(j.Store, "infer/"), len(parts))
//	for {
//		i, ok, err := q.Claim(ctx)
//		if err != nil || !ok { break }
//		... // do item i
//		q.Done(ctx, i, result)
//	}
//
// Both satisfy Queue, so a package's loop takes either. Package infer
// (partitions, an error counter, a stop when a worker fails, per-worker
// summaries) and package trials (trials, their results, ASHA's rung
// records, the best trial's model) are its users.
package workqueue
