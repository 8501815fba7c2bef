// Package ps is fathom's parameter server: the parameters of a model are
// sharded over S server processes, workers push their gradients and pull
// the updated parameters every step, and the optimizer runs on the
// servers, each over its shard (Li et al., "Scaling Distributed Machine
// Learning with the Parameter Server", OSDI 2014; Dean et al.,
// "Large Scale Distributed Deep Networks" (Downpour SGD), NIPS 2012).
//
// # Sharding
//
// Plan cuts the flattened concatenation of the parameters into S ranges
// of equal length (balanced bytes, so no server is the hot one), each cut
// moved to a multiple of Align elements within the tensor it falls in, so
// that the optimizer's vector kernels treat every element as they do in
// one process. Every process computes the same plan from the parameter
// sizes; nothing about it is exchanged.
//
// # Synchronous and asynchronous servers
//
// A synchronous server waits for every worker's gradient of a step, sums
// them in the tree of recursive doubling (adjacent workers, then pairs of
// pairs: the order data-parallel training's deterministic all-reduce
// uses, so the sum has the same bits) and takes one optimizer step; a pull
// for step t is answered once t steps are applied. With each worker's
// gradient weighted by its share of the batch, that is data-parallel
// training's step, bitwise in deterministic training (package train's
// ParameterServer strategy).
//
// An asynchronous server applies every gradient as it arrives, one
// optimizer step each, and bounds staleness the stale-synchronous way
// (Clock; Ho et al., NIPS 2013): a worker's pull for step t waits until
// every live worker has pushed at least t − K gradients. K = 0 keeps the
// workers in lock-step (each gradient still applied on its own); a larger
// K lets fast workers run ahead.
//
// # Protocol and failures
//
// One TCP connection per worker and server, authenticated with the job
// token (comm/auth, KindPS); frames of a 24-byte header and float32
// payloads (wire.go). Worker 0 sends the initial parameters; every worker
// pulls them before its first step; Client.Step pushes a step's gradient
// and pulls the next step's parameters from all servers concurrently.
//
// A worker whose connection breaks before it says done is lost: an
// asynchronous server takes it out of the staleness bound and carries on
// with the others (Stats.Lost); a synchronous one cannot complete the
// step, fails, and tells the waiting workers which worker it lost. A
// server that dies takes its shard with it: the workers' next exchange
// fails with a *ServerLostError naming it, and the job stops. Every wait is
// bounded by a timeout.
//
// # Checkpoints
//
// Between two steps worker 0 may ask each synchronous server for its
// optimizer state (Client.FetchState, opState), and after a restart send
// it back after the initial parameters (Client.LoadState, opLoadState).
// Optimizer.FetchState puts the servers' states into a checkpoint's
// StateDict under "server<s>/" keys; Optimizer.LoadState takes them out
// for Start to send. An asynchronous server refuses the exchange.
package ps
