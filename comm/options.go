package comm

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-ml/fathom/comm/store"
	"github.com/fathom-ml/fathom/internal/distenv"
)

// Transport selects how ranks exchange data.
type Transport int

const (
	// TransportAuto uses shared memory between ranks on the same host
	// (unless FATHOM_SHM=0) and TCP otherwise.
	TransportAuto Transport = iota
	// TransportTCP always uses TCP.
	TransportTCP
	// TransportSHM requires shared memory with every peer (same host).
	TransportSHM
)

// Algorithm is an all-reduce algorithm.
type Algorithm int

const (
	// AlgoAuto picks recursive doubling for small messages and the ring for
	// large ones (threshold Options.SmallBytes).
	AlgoAuto Algorithm = iota
	// AlgoRing is the bandwidth-optimal ring: reduce-scatter then all-gather.
	AlgoRing
	// AlgoRecursiveDoubling is the latency-optimal recursive doubling.
	AlgoRecursiveDoubling
	// AlgoNaive reduces everything on rank 0 and broadcasts the result from
	// it: the baseline the others are measured against.
	AlgoNaive
)

func (a Algorithm) String() string {
	switch a {
	case AlgoAuto:
		return "auto"
	case AlgoRing:
		return "ring"
	case AlgoRecursiveDoubling:
		return "rd"
	case AlgoNaive:
		return "naive"
	}
	return fmt.Sprintf("Algorithm(%d)", int(a))
}

// ParseAlgorithm parses "auto", "ring", "rd" (or "recursive-doubling") and "naive".
func ParseAlgorithm(s string) (Algorithm, error) {
	switch strings.ToLower(s) {
	case "auto", "":
		return AlgoAuto, nil
	case "ring":
		return AlgoRing, nil
	case "rd", "recursive-doubling":
		return AlgoRecursiveDoubling, nil
	case "naive":
		return AlgoNaive, nil
	}
	return 0, fmt.Errorf("comm: unknown all-reduce algorithm %q (want auto, ring, rd or naive)", s)
}

// Options configure a process group. FromEnv fills them from the
// environment torchrun and the Kubernetes training operators set.
type Options struct {
	Rank, WorldSize           int
	LocalRank, LocalWorldSize int // informational (device placement); -1 if unknown

	// MasterAddr:MasterPort is where rank 0 hosts the rendezvous store.
	MasterAddr string
	MasterPort int

	// Token is the job secret every connection must prove it knows
	// (FATHOM_JOB_TOKEN). Required when WorldSize > 1.
	Token []byte

	// BindAddr is the IP the worker listener binds to. Empty: loopback when
	// MasterAddr is a loopback address, else the local address that routes
	// to MasterAddr.
	BindAddr string

	// NewStore, if set, replaces the TCP store hosted by rank 0 (e.g. an
	// etcd-backed store). It is called two or three times: one client for
	// rendezvous, one that waits for aborts and, unless the heartbeat is
	// disabled, one for the heartbeat.
	NewStore func(ctx context.Context) (store.Store, error)
	// StoreHosted says the store on MasterAddr:MasterPort is hosted by
	// someone else (the launcher of node 0, for the job's whole life):
	// rank 0 dials it instead of listening (env FATHOM_STORE_HOSTED=1).
	StoreHosted bool
	// Generation namespaces every store key ("g<N>/..."), so that the
	// workers of a restarted job (FATHOM_RESTART_COUNT) never meet the
	// keys, addresses or job id of an earlier attempt in a store that
	// outlived it.
	Generation int

	// Timeout bounds every collective (default 5 minutes).
	Timeout time.Duration
	// HeartbeatTimeout is how long a rank may stay silent before the others
	// name it and abort the job (default 15 s; env FATHOM_HEARTBEAT_TIMEOUT;
	// negative disables the heartbeat). Every rank bumps a counter in the
	// store several times per HeartbeatTimeout from a goroutine independent
	// of collective progress, so a stopped (SIGSTOP), frozen or livelocked
	// process is named within seconds instead of after Timeout.
	HeartbeatTimeout time.Duration
	// RendezvousTimeout bounds New (default 5 minutes).
	RendezvousTimeout time.Duration

	Transport Transport
	// ShmRingBytes is the size of each direction's shared-memory ring
	// (default 4 MiB; env FATHOM_SHM_BYTES).
	ShmRingBytes int
	// MaxEarlyBytes bounds, per peer, the bytes of messages held because
	// they arrived before their receive was posted (a Send ahead of its Recv,
	// a peer already in the next collective). Beyond it the job aborts with
	// ErrProtocol rather than grow without limit (default 1 GiB; env
	// FATHOM_MAX_EARLY_BYTES).
	MaxEarlyBytes int
	// SmallBytes is the message size below which AlgoAuto uses recursive
	// doubling (default 256 KiB).
	SmallBytes int

	// Logger receives warnings (refused connections) and debug messages.
	Logger *slog.Logger
}

// FromEnv reads RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT, FATHOM_JOB_TOKEN, FATHOM_BIND_ADDR, FATHOM_SHM (0 = TCP only),
// FATHOM_SHM_BYTES, FATHOM_MAX_EARLY_BYTES, FATHOM_TIMEOUT and
// FATHOM_HEARTBEAT_TIMEOUT (Go durations); the names and their parsing are package internal/distenv's.
// Missing RANK and WORLD_SIZE mean a single-process job (rank 0 of 1).
func FromEnv() (Options, error) {
	e, err := distenv.FromOS()
	if err != nil {
		o, _ := EnvOptions(e)
		return o, fmt.Errorf("comm: %w", err)
	}
	return EnvOptions(e)
}

// EnvOptions returns the options of the environment e (FromEnv's, for an
// environment already parsed: package comm/join's).
func EnvOptions(e distenv.Env) (Options, error) {
	o := Options{
		Rank: e.Rank, WorldSize: e.WorldSize, LocalRank: e.LocalRank, LocalWorldSize: e.LocalWorldSize,
		MasterAddr: e.MasterAddr, MasterPort: e.MasterPort, Token: []byte(e.JobToken), BindAddr: e.BindAddr,
		ShmRingBytes: e.SHMBytes, MaxEarlyBytes: e.MaxEarlyBytes, Timeout: e.Timeout,
		HeartbeatTimeout: e.HeartbeatTimeout, StoreHosted: e.StoreHosted, Generation: e.RestartCount,
	}
	if e.NoSHM {
		o.Transport = TransportTCP
	}
	return o, o.check()
}

func (o *Options) check() error {
	if o.WorldSize < 1 {
		return fmt.Errorf("comm: %s %d < 1", distenv.WorldSize, o.WorldSize)
	}
	if o.Rank < 0 || o.Rank >= o.WorldSize {
		return fmt.Errorf("comm: %s %d out of range for %s %d", distenv.Rank, o.Rank, distenv.WorldSize, o.WorldSize)
	}
	if o.WorldSize > 1 && o.NewStore == nil && (o.MasterPort <= 0 || o.MasterPort > 65535) {
		return fmt.Errorf("comm: %s %d out of range", distenv.MasterPort, o.MasterPort)
	}
	if o.WorldSize > 1 && len(o.Token) == 0 {
		return fmt.Errorf("comm: rank %d: %s is not set; every rank of a job needs the same secret "+
			"(`fathom run` generates one; under torchrun export %s=$(head -c 32 /dev/urandom | base64) before launching)",
			o.Rank, distenv.JobToken, distenv.JobToken)
	}
	return nil
}

func (o *Options) defaults() {
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
	if o.HeartbeatTimeout == 0 {
		o.HeartbeatTimeout = 15 * time.Second
	}
	if o.RendezvousTimeout <= 0 {
		o.RendezvousTimeout = 5 * time.Minute
	}
	if o.ShmRingBytes <= 0 {
		o.ShmRingBytes = 4 << 20
	}
	o.ShmRingBytes = max(o.ShmRingBytes&^4095, 64<<10)
	if o.SmallBytes <= 0 {
		o.SmallBytes = 256 << 10
	}
	if o.MaxEarlyBytes <= 0 {
		o.MaxEarlyBytes = 1 << 30
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MasterAddr == "" {
		o.MasterAddr = distenv.DefaultMasterAddr
	}
}

// BindIP returns the IP address a listener of this job's process binds
// to: Options.BindAddr (FATHOM_BIND_ADDR) when set, loopback when the
// master is a loopback address, else the local address the kernel routes
// to MasterAddr from. It is the one place fathom picks a listen address:
// the group's peer listener and a parameter server's both ask it.
func BindIP(o Options) (string, error) {
	if o.BindAddr != "" {
		return o.BindAddr, nil
	}
	master := o.MasterAddr
	if master == "" {
		master = distenv.DefaultMasterAddr
	}
	if isLoopback(master) {
		return "127.0.0.1", nil
	}
	// the local address the kernel would use to reach the master
	c, err := net.Dial("udp", net.JoinHostPort(master, strconv.Itoa(max(o.MasterPort, 1))))
	if err != nil {
		return "", fmt.Errorf("comm: no route to %s %s to choose a bind address (set %s): %v", distenv.MasterAddr, master, distenv.BindAddr, err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).IP.String(), nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostID identifies the machine (and boot) a rank runs on: ranks with equal
// host ids can share memory. The network namespace is part of it: ranks in
// different namespaces (containers, pods, the simulated hosts of
// netcluster.sh) talk over the network even on one machine.
func hostID() string {
	h, _ := os.Hostname()
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	ns, _ := os.Readlink("/proc/self/ns/net")
	return h + "/" + strings.TrimSpace(string(b)) + "/" + ns
}
