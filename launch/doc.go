// Package launch is the process launcher behind `fathom run`: it plays the
// role torchrun plays for PyTorch, starting the workers of a distributed job
// on one machine with the environment the collective layer (package comm)
// reads to find its peers.
//
// # Usage
//
//	fathom run -n 4 -- fathom bench allreduce
//	fathom run -n 2 -- sh -c 'echo rank=$RANK world=$WORLD_SIZE'
//
// starts N workers of the command. From Go, the CLI is a thin wrapper over
//
//	res, err := launch.Run(ctx, launch.Config{
//		Command:      []string{"./worker", "--epochs", "3"},
//		NProcPerNode: 4,
//		MaxRestarts:  2,
//	})
//
// Run returns once every worker has exited. err is nil when all exited 0,
// wraps ErrWorkerFailed when one failed and no restarts were left (then
// res.Summary() says which rank caused it, which failed first, how, after how long, and shows
// the last lines of its stderr; Run has already printed it), and wraps
// ErrInterrupted when a signal or the context stopped the run. Package
// launchflag gives the torchrun-style command line (into a Config) to any program.
//
// # The environment of a worker
//
// With N = NProcPerNode, M = NNodes and I = NodeRank, local worker j gets
//
//	RANK               I*N + j (global rank; ranks are assigned node by node)
//	WORLD_SIZE         M*N
//	LOCAL_RANK         j
//	LOCAL_WORLD_SIZE   N
//	GROUP_RANK         I (torchrun's name), also NODE_RANK
//	GROUP_WORLD_SIZE   M
//	MASTER_ADDR        Config.MasterAddr, default 127.0.0.1
//	MASTER_PORT        Config.MasterPort; on one node, default a free port
//	FATHOM_JOB_TOKEN   the job's secret (below)
//	FATHOM_RESTART_COUNT  0 for the first start, +1 at every restart
//	FATHOM_MAX_RESTARTS   Config.MaxRestarts
//	GOMAXPROCS, OMP_NUM_THREADS  only with ThreadsPerWorker (--threads-per-worker)
//
// on top of the launcher's own environment (or Config.Env). RANK,
// WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT are
// the names torchrun and the Kubernetes training operators (Kubeflow's
// PyTorchJob) set, so a fathom worker runs unchanged under them too, given
// FATHOM_JOB_TOKEN.
//
// The job token is every connection's proof that it belongs to the job. It
// is inherited from FATHOM_JOB_TOKEN when that is set and not empty (so all
// nodes of a multi-node job share it: set it from a Kubernetes Secret, see
// deploy/), and otherwise generated from 32 bytes of crypto/rand,
// hex-encoded. The launcher never prints or logs it, and no value it returns
// contains it (Worker and Result leave it out by design).
//
// # Output
//
// Each worker's stdout and stderr go through a pipe to the launcher, which
// writes them line by line to its own stdout and stderr, each line prefixed
// with the worker's global rank ("[3] loss 0.25"). A line is written with
// one Write under a lock, so lines of different workers never mix; a last
// line without a newline gets one, and lines over 1 MiB are split.
// Config.NoPrefix (--no-prefix) drops the prefix but keeps the line
// buffering. The last Config.TailLines lines of each worker's stderr are
// kept for the failure summary.
//
// # Failures, signals and restarts
//
// Every worker is started in its own process group, so signals from the
// terminal reach only the launcher, and a signal sent to a worker reaches
// the processes it started (a shell's children) too. On Linux a worker also
// gets SIGKILL if the launcher itself dies (Pdeathsig).
//
//   - When a worker fails (exits non-zero or is killed by a signal), the
//     launcher sends SIGTERM to the others and SIGKILL to those still alive
//     after Config.Grace (--grace, default 5s), and SIGCONT, so that a
//     stopped worker acts on the SIGTERM.
//   - The first worker to fail is often a survivor: package comm makes every
//     rank fail naming a dead or silent (stopped, hung) rank, "lost rank 1
//     (detected by rank 3: …)". Result.Culprit, and the summary's first
//     line, name the rank the first failed worker's last stderr lines call
//     lost, else a worker seen stopped (SIGSTOP; Linux) when the first
//     failure happened, else the first to fail.
//   - A signal on Config.Signals (the CLI forwards SIGINT and SIGTERM) is
//     forwarded to every worker and starts the same grace period; a second
//     signal kills them at once. Cancelling the context acts like SIGTERM.
//     The CLI then exits 130 (SIGINT) or 143 (SIGTERM), as a shell would.
//   - After a failure, the whole local group is stopped and restarted, up to
//     Config.MaxRestarts (--max-restarts) times, with FATHOM_RESTART_COUNT
//     incremented and the same MASTER_PORT and token: the basis for elastic
//     training, where workers resume from their last checkpoint.
//   - When a worker exits, whatever is left of its process group is killed,
//     and the launcher waits at most 2s for output pipes held open by
//     processes that escaped the group. Run never waits forever on a dead
//     child and leaves no goroutine behind.
//
// On one node the launcher hosts the job's rendezvous store on
// MASTER_ADDR:MASTER_PORT for the job's whole life (the workers get
// FATHOM_STORE_HOSTED=1): rank 0, busy computing, would answer the other
// workers' requests only between its own computations.
//
// # Several nodes
//
// As with torchrun, a multi-node job runs one launcher per node, all with
// the same --nnodes M, --master-addr and --master-port (required when
// M > 1: a free port picked on one node means nothing to the others) and a
// distinct --node-rank in [0, M):
//
//	node 0: fathom run -n 4 --nnodes 2 --node-rank 0 --master-addr 10.0.0.1 --master-port 29500 -- ./worker
//	node 1: fathom run -n 4 --nnodes 2 --node-rank 1 --master-addr 10.0.0.1 --master-port 29500 -- ./worker
//
// Node 0's launcher hosts the job's rendezvous store on
// MASTER_ADDR:MASTER_PORT for the job's whole life (the workers get
// FATHOM_STORE_HOSTED=1); the launchers meet there, check that they were
// started alike (--nnodes, --nproc-per-node, --max-restarts) and restart
// as one: every attempt is joined by all nodes before any starts its
// workers; the first failure (or interrupt) of an attempt is published and
// stops every node's workers; all nodes then read every node's outcome and
// take the same decision (restart with FATHOM_RESTART_COUNT+1, or stop).
// Workers' store keys are namespaced by attempt ("g<N>/"), so a new attempt
// never meets a dying one. Every node needs the same FATHOM_JOB_TOKEN.
// --rdzv-timeout bounds how long the launchers wait for each other.
// deploy/ holds a Kubernetes example (an Indexed Job and a
// headless Service).
//
// # Elastic membership over etcd
//
// With --rdzv-backend etcd the nodes need no ranks and no master: the
// launchers meet in the user's etcd cluster (package launch/rdzv) and the
// job's size may change while it runs, between MIN and MAX nodes:
//
//	every node: FATHOM_JOB_TOKEN=... fathom run -n 4 --nnodes 1:4 --rdzv-backend etcd \
//	    --rdzv-endpoint 10.0.0.5:2379 --rdzv-id job-7 -- fathom train job.yaml
//
// The launchers form numbered rounds. A round closes once MIN nodes have
// registered and --rdzv-last-call (3s) has passed without more, or at once
// with MAX nodes; its member list is written once, by an etcd transaction,
// and a node's rank is its place in the list (NNodes is its length). The
// round's node 0 hosts a store for the round on a free port of its
// address (--rdzv-host, else the address it reaches etcd from) and
// publishes host:port in etcd; the coordinator protocol above then runs
// within the round, and the workers get
//
//	WORLD_SIZE            (nodes in the round) * N
//	RANK, GROUP_RANK      from the node's place in the round
//	MASTER_ADDR/PORT      the round's store (FATHOM_STORE_HOSTED=1)
//	FATHOM_RESTART_COUNT  the round's number: store keys are namespaced by it,
//	                      and `fathom train` resumes from its checkpoint
//
// Each launcher's etcd keys are held by a lease it keeps alive (5s TTL). A
// node that starts while a round runs registers for the next one; the
// running nodes see that ("a node joins"), stop their workers (SIGTERM,
// --grace) and go on to the next round together with it. A member whose
// lease vanishes ("a node leaves": its launcher was stopped, which revokes
// the lease at once, or it died and the lease expired) sends the others to
// the next round too, without waiting for its word; so does a store or
// coordinator error while a member is found gone. A launcher that is
// interrupted leaves the job: it stops its workers and the others go on
// without it. Changes of membership do not count against --max-restarts;
// worker failures (all nodes present) do, as in a static job. A node that
// comes when a round has MAX nodes waits as a standby for the next round
// (at most --rdzv-timeout). Every etcd request has a timeout, and forming
// a round is bounded by --rdzv-timeout. The rendezvous keys live under
// /fathom/rdzv/<id>/; a job that ended refuses newcomers (rdzv.ErrEnded),
// so every job needs a new --rdzv-id. FATHOM_JOB_TOKEN must be set on
// every node: etcd holds no secret, but the round's store and every
// worker connection prove the token.
//
// # Portability
//
// Process groups, signal forwarding and leftover cleanup need Unix. On
// other systems stopping a worker kills it outright and its children are
// not reached.
package launch
