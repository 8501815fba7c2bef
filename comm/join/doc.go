// Package join is how a fathom process joins its distributed job: the one
// place that reads the environment `fathom run` (or torchrun, or a
// Kubernetes training operator) sets, joins the process group and
// connects to the job's store. `fathom train`, `fathom ml fit`, `fathom
// predict`, `fathom tune` and the benchmarks all join through it.
//
//	j, err := join.FromEnv(ctx, join.Options{Group: true, Store: true})
//	if err != nil { ... }
//	defer j.Close()
//	if j.Distributed() {
//		comm.AllReduce(j.Group, x, comm.Sum) // the collectives
//		q := workqueue.NewStore(j.Store, n)  // work shared through the store
//	}
//
// A Job holds the environment (internal/distenv), the process group
// (package comm) when asked for, and a client of the job's store (package
// comm/store) whose keys live under the restart generation's prefix, so
// the workers of a restarted job never meet an earlier attempt's keys in
// a store that outlived it. A single process (WORLD_SIZE unset or 1)
// joins nothing and gets a Job with the environment alone.
//
// Who hosts the store: the launcher of a single node, or of node 0 of
// several (FATHOM_STORE_HOSTED=1), for the job's whole life; otherwise
// rank 0 (its group, or the Job itself when no group is joined).
package join
