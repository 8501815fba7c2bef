// Package rdzv is the elastic rendezvous behind `fathom run --nnodes
// MIN:MAX --rdzv-backend etcd`: the launchers of one job meet in an etcd
// cluster (the user's), agree on who takes part in each numbered round, and
// notice when a node joins or leaves while a round runs. It knows nothing of
// workers or stores: package launch runs a round's workers and its
// coordinator on top of it.
//
// # Rounds
//
// Every key lives under Prefix(id) = "/fathom/rdzv/<id>/":
//
//	node/<name>               one per live launcher, on its lease
//	round/<r>/member/<name>   launcher <name> wants to take part in round r (on its lease)
//	round/<r>/closed          round r's record, written exactly once: its members in rank order
//	round/<r>/store           host:port of round r's store, by its node 0 (on its lease)
//	round/<r>/final/<name>    <name> ended the job with round r's verdict
//
// A Session holds one lease, kept alive for the launcher's life (TTL
// Config.TTL): a launcher that dies loses its keys within the TTL, one that
// closes its Session loses them at once. Join registers the node in the
// open round (the newest one if it is not closed yet, else the next) with
// a transaction that fails once the round is closed, and then waits:
// once at least MinNodes are registered, and no live member of the
// previous round is still missing (they are on their way), the round
// closes after Config.LastCall, or at once with MaxNodes members. Closing
// is a transaction that writes round/<r>/closed only if it is absent, so
// every node reads the same list; a node's rank is its place in it (the
// order of registration). A node left out (it came after the record was
// written, or beyond MaxNodes) goes on to the next round.
//
// While a round runs, Watch reports a change once: a member whose node key
// vanished without a final marker (it left: it was stopped, or died and its
// lease expired), or a registration for the next round (a node joins; a
// stranger counts only while the round has fewer than MaxNodes members, so
// extra nodes wait as standbys). Every member sees the same keys and so the
// same change, and goes to the next round.
//
// # Example
//
//	s, err := rdzv.Open(ctx, rdzv.Config{Endpoints: []string{"10.0.0.5:2379"}, ID: "job-7", MinNodes: 1, MaxNodes: 4})
//	if err != nil { ... }
//	defer s.Close()
//	r, err := s.Join(ctx, -1, 0, "")
//	// r.Members[r.Rank] is this node; node 0 publishes its store with PublishStore
//	changes, stop := s.Watch(ctx, r) // a value arrives when a node joins or leaves
//	defer stop()
package rdzv
