// Package comm is fathom's collective-communication layer: a process group
// of WorldSize ranks, a rendezvous store, TCP and shared-memory transports,
// and the collectives that data-parallel training (package ddp), parameter
// servers and classic ML aggregation are built on.
//
// # Process group
//
// A Group is built from the environment that torchrun and the Kubernetes
// training operators set — RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT — plus FATHOM_JOB_TOKEN, the job secret; so a
// fathom worker runs unchanged under `fathom run`, torchrun or a PyTorchJob:
//
//	g, err := comm.NewFromEnv(ctx)
//	if err != nil { ... }
//	defer g.Close()
//	grad := make([]float32, n)
//	err = comm.AllReduce(g, grad, comm.Avg)
//
// or from explicit Options in Go (comm.New). Rank 0 hosts the rendezvous
// store (package comm/store, the role of PyTorch's TCPStore) on
// MASTER_ADDR:MASTER_PORT. Every rank listens on an ephemeral port, publishes
// its address and host id there, waits (bounded by RendezvousTimeout) for
// the others, checks that rank 0 announced the same WORLD_SIZE, and connects
// pairwise: rank r dials every lower rank and accepts every higher one, one
// TCP connection per peer with Nagle disabled. Options.NewStore plugs in
// another store (an etcd backend for elastic jobs).
//
// # Collectives
//
// The core is generic over slices of float32, float64 and int64 (Number);
// package comm/tensorcomm runs them on a tensor's flat storage, so this
// package depends on no tensor type:
//
//	AllReduce(g, x, op)        in place; op Sum, Avg, Max, Min, Prod
//	AllReduceWith(g, x, op, a) with an explicit Algorithm
//	Broadcast(g, x, root)      binomial tree, pipelined in 1 MiB pieces
//	AllGather(g, out, in)      ring
//	ReduceScatter(g, out, in, op)
//	ReduceScatterInPlace(g, x, op)  rank r's chunk of x reduced, no copies
//	AllGatherInto(g, pieces, in)    into a vector cut into pieces (parameters)
//	Gather(g, out, in, root), Scatter(g, out, in, root)
//	Barrier(g)                 dissemination barrier
//	Send(g, x, dst, tag), Recv(g, x, src, tag)
//
// Each has an Async variant returning a *Work whose Wait returns the error.
// Operations of one group run one at a time in submission order (like a
// CUDA stream), which is what lets DDP queue gradient buckets during the
// backward pass and wait for them at the end. All ranks must issue the same
// collectives in the same order with the same lengths; a mismatch is caught
// (message sizes and per-collective tags are checked) and aborts the job
// with ErrProtocol rather than corrupting data. Point-to-point messages that
// arrive before their Recv is posted are buffered in memory (one copy), up to
// Options.MaxEarlyBytes per peer (1 GiB); past that the job aborts with
// ErrProtocol naming the peer and tag. A kept message's buffer grows as its
// bytes arrive, so a header that announces much and delivers little costs
// little.
//
// # Subgroups
//
// g.Subgroup(ranks) returns the group of some ranks of g, as
// torch.distributed's new_group: rank ranks[i] of g is rank i of the
// subgroup, and every collective above (every all-reduce algorithm
// included) runs among the members only. g.Split(color, key) is the
// collective form (MPI_Comm_split): ranks of equal color form a subgroup,
// ordered by key. For ZeRO shards, parameter-server groups or pipeline
// stages:
//
//	stage, err := g.Subgroup([]int{0, 2}) // on ranks 0 and 2 only
//	err = comm.AllReduce(stage, grad, comm.Avg)
//
// Only members call Subgroup (a non-member gets ErrNotMember; a bad list
// ErrBadRanks); members that make several subgroups with the same list make
// them in the same order. Creating one exchanges nothing: a subgroup
// reuses its parent's TCP and shared-memory links, and every message header
// carries the id of its group (derived from the parent's id and the member
// list), so a subgroup, its parent and its siblings never take each
// other's messages, and each has its own operation queue: their collectives
// may run concurrently. A subgroup shares the job's fate (a lost rank
// aborts every group, with errors naming job ranks); closing the group New
// built closes its subgroups. Group.Members maps subgroup ranks to job
// ranks.
//
// # All-reduce algorithms
//
// Ring (AlgoRing; Patarasuk & Yuan 2009). The vector of K bytes is cut into
// N chunks. In N-1 reduce-scatter steps every rank sends one chunk to its
// successor while receiving another from its predecessor and reducing it in;
// afterwards rank r holds the fully reduced chunk r. N-1 all-gather steps
// circulate the reduced chunks. Each rank sends (and receives)
// 2(N-1)·K/N bytes — at most 2K whatever N — and every link is busy in every
// step, so the time is 2(N-1)/N·K/B on links of bandwidth B: the lower bound
// for any all-reduce in which each rank must send out its K bytes of
// information once and receive the others' once. That is why nccl-tests
// report bus bandwidth busbw = (K/t)·2(N-1)/N: it equals the link rate for
// an optimal algorithm, independent of N. The 2(N-1) steps run as one
// pipeline of 1 MiB segments: what a rank sends at step i+1 is what it
// received at step i, so it forwards each segment as soon as that segment is
// reduced, and its outgoing link never waits for a whole chunk. Received
// segments are reduced piece by piece as they stream in (256 KiB from a
// socket, or straight out of the shared-memory ring).
//
// Recursive doubling (AlgoRecursiveDoubling; Thakur, Rabenseifner & Gropp
// 2005): log2(N) rounds in which partners at distance 1, 2, 4, ... exchange
// whole vectors. Fewest latencies, but K·log2(N) bytes: for small messages.
// A world size that is not a power of two first folds the surplus ranks into
// their neighbours and unfolds the result at the end.
//
// Naive (AlgoNaive): everyone sends to rank 0, which reduces and sends the
// result back to each rank. Rank 0's link carries 2(N-1)·K bytes, N times
// the ring's; it is the baseline for the comparison. AlgoAuto picks
// recursive doubling below Options.SmallBytes (256 KiB) and the ring above.
//
// The schedules — who sends which chunk to whom at which step — are pure
// functions in package comm/sched, tested by simulating every rank without
// sockets; this package only executes them.
//
// # Transports
//
// TCP: one connection per peer; a message is a 16-byte header (tag, length)
// and the slice's own bytes, written with one writev straight from the
// caller's slice (unsafe.Slice view; the host must be little-endian) and
// read straight into the destination. A ring step sends on one goroutine
// while receiving on another (full duplex).
//
// Shared memory: ranks whose host ids (hostname + kernel boot id) match map a
// file in /dev/shm holding one single-producer single-consumer ring per
// direction (Options.ShmRingBytes, default 4 MiB), with head and tail
// counters updated by sync/atomic on the mapped memory. A waiting side spins,
// then yields, then sleeps with backoff; no cgo, no futex. The file is
// unlinked as soon as both ranks mapped it. FATHOM_SHM=0 (or
// Options.Transport = TransportTCP) disables it.
//
// Windows: when every rank of a group shares memory, NewWindow gives each
// rank a buffer that every other rank maps (Window.Part), ordered by
// Window.Barrier (a counter per rank, polled the same way). Collectives on
// windows read the peers' memory in place, with no message at all:
// Window.SumChunk is the reduce-scatter ZeRO-1 runs in package ddp.
//
// # Security
//
// Every connection — worker to worker and worker to store — starts with the
// challenge-response of package comm/auth: HMAC-SHA256 under the job token
// over nonces from both sides, checked in constant time, in both directions,
// before any data flows. A peer connection then presents the job id rank 0
// drew at random, so a worker of another job with the same token cannot
// join. A stranger is refused and logged with its remote address and rank
// claim, never the token; at most auth.RefusalBurst such lines a minute per
// listener, then one line with the count of the rest. Listeners bind to loopback unless MASTER_ADDR is
// not a loopback address (then the local address routing to it) or
// FATHOM_BIND_ADDR / Options.BindAddr says otherwise. A job with more than
// one rank refuses to start without a token.
//
// # Failures
//
// Nothing hangs. Every operation runs under Options.Timeout (default 5 min;
// FATHOM_TIMEOUT). A rank whose peer's connection closes or breaks returns a
// *PeerLostError naming that rank and publishes an abort in the store; every
// other rank is waiting on that key and aborts at once, interrupting its
// blocked transfers, so ranks not adjacent to the failure also return, in
// well under a second, a *PeerLostError naming the lost rank (and the rank
// that detected it). A rank that sees a connection close first checks the
// store for an abort already published, so a cascade of exiting processes
// is attributed to the first failure. Losing the store (rank 0) counts as
// losing rank 0. After an error the group is aborted: later operations
// fail at once with the same error, and the job should restart (elastic
// restarts belong to the launcher). A peer that is cut off without its
// connection closing (link down, host frozen) is detected by the kernel:
// TCP_USER_TIMEOUT drops a connection whose data stays unacknowledged for
// 10 s and keep-alive probes (5 s idle, 3 probes 2 s apart) catch an idle
// one; measured on the simulated cluster, all survivors name the cut-off
// rank about 10 s after its link goes down.
//
// A rank that is alive but silent — stopped by SIGSTOP, in a stuck garbage
// collection, livelocked — keeps its connections up (its kernel still
// acknowledges), so neither of those fires. Every rank therefore bumps a
// heartbeat counter in the store several times per Options.HeartbeatTimeout
// (default 15 s; FATHOM_HEARTBEAT_TIMEOUT) from a goroutine independent of
// collective progress, and watches the counters of the few ranks after it
// (the abort reaches the rest through the store): a rank whose
// counter stands still for HeartbeatTimeout is named by every survivor, in a
// *PeerLostError ("lost rank 1 (detected by rank 0: rank 1 has not been
// heard from for 15s (stopped or hung?))"); a store that stops answering
// names rank 0, its host. The launcher reads that wording to blame the
// silent rank rather than the first survivor to exit. A collective timeout
// lists the ranks not heard from lately. Ranks waiting on shared memory
// sleep (backing off to 1 ms naps) rather than spin while they wait.
//
// Close waits until every rank has called Close (through the store), so no
// rank tears down a connection another still reads from; rank 0 stops the
// store last.
package comm
