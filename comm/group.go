package comm

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fathom-ml/fathom/comm/auth"
	"github.com/fathom-ml/fathom/comm/store"
)

// Group is a process group: WorldSize ranks connected pairwise, each rank
// one Group value. Collectives are package functions taking the group
// (AllReduce(g, x, Sum)); every rank must call the same collectives in the
// same order with matching lengths. A Group is safe for concurrent use;
// operations run one at a time in submission order.
type Group struct {
	opts       Options
	rank, size int
	jobID      string

	links  []link         // links[r] for r != rank
	conns  []*net.TCPConn // the TCP connection of each peer (also under shm links)
	ln     net.Listener
	server *store.Server
	st     store.Store // rendezvous and close
	watch  store.Store // blocks on the abort key
	beat   store.Store // the heartbeat's own client (nil when disabled)
	hb     heartbeat

	incoming chan accepted
	refuse   *auth.RefusalLog // refused peer connections, rate-limited

	mu      sync.Mutex // pending, seq, closed
	pending int
	seq     uint32
	closed  bool
	execMu  sync.Mutex // held while an operation runs
	ops     chan *Work
	opsDone chan struct{}

	abortMu  sync.Mutex
	abortErr error
	aborted  atomic.Bool
	closing  atomic.Bool
	// An abort another rank publishes ends this rank's close barrier
	// (closeCancel) with closeAbort; it aborts the group only if this rank
	// is not closing yet.
	closeAbort  error
	closeCancel context.CancelFunc

	scratch     []byte        // reused by the operation that holds execMu
	shmYieldFor time.Duration // how long a shared-memory wait yields before sleeping
	bg          sync.WaitGroup

	// A subgroup (subgroup.go) has its own ranks, operation queue and tag
	// space (gid) and shares everything else with the group New built, its
	// root: links, store, abort state. A root is its own root, with gid 0
	// and nil members.
	root    *Group
	gid     uint32
	members []int // the root rank of each rank of a subgroup

	subMu   sync.Mutex        // root only: guards the fields below
	subs    []*Group          // every subgroup made from this root, in creation order
	subIDs  map[uint32][]int  // their ids and members, to refuse id collisions
	subMade map[string]uint32 // how many subgroups of one parent and member list exist
	// subsClosed: Close has closed the subgroups; no more may be made.
	subsClosed bool
}

type accepted struct {
	rank int
	conn *net.TCPConn
}

// peerInfo is what each rank publishes in the store.
type peerInfo struct {
	Addr string `json:"addr"`
	Host string `json:"host"`
	Shm  bool   `json:"shm"`
	Pid  int    `json:"pid"`
}

type jobInfo struct {
	ID    string `json:"id"`
	World int    `json:"world"`
}

type abortMsg struct {
	By     int    `json:"by"`
	Lost   int    `json:"lost"`
	Reason string `json:"reason"`
}

const (
	keyJob       = "fathom/job"
	keyAbort     = "fathom/abort"
	keyClosed    = "fathom/closed"
	keyClosedAll = "fathom/closed/all"
)

func keyRank(r int) string { return "fathom/rank/" + strconv.Itoa(r) }

// NewFromEnv builds a group from the environment (see FromEnv).
func NewFromEnv(ctx context.Context) (*Group, error) {
	o, err := FromEnv()
	if err != nil {
		return nil, err
	}
	return New(ctx, o)
}

// New joins the process group described by o: rank 0 starts the store, every
// rank publishes its address, waits for the others (bounded by
// o.RendezvousTimeout and ctx), and connects to every peer over an
// authenticated TCP connection, upgraded to shared memory when both ranks
// run on the same host.
func New(ctx context.Context, o Options) (_ *Group, err error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	if !littleEndian {
		return nil, errors.New("comm: big-endian hosts are not supported (the wire format is the memory layout)")
	}
	o.defaults()
	g := &Group{
		opts: o, rank: o.Rank, size: o.WorldSize,
		ops: make(chan *Work, 4096), opsDone: make(chan struct{}),
	}
	g.root = g
	if g.size == 1 {
		go g.worker()
		return g, nil
	}
	ctx, cancel := context.WithTimeout(ctx, o.RendezvousTimeout)
	defer cancel()
	defer func() {
		if err != nil {
			g.teardown()
			err = fmt.Errorf("comm: rank %d of %d: rendezvous: %w", g.rank, g.size, err)
		}
	}()
	if err := g.openStore(ctx); err != nil {
		return nil, err
	}
	if err := g.agreeOnJob(ctx); err != nil {
		return nil, err
	}
	ip, err := BindIP(o)
	if err != nil {
		return nil, err
	}
	g.ln, err = net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", ip, err)
	}
	g.incoming = make(chan accepted, g.size)
	g.refuse = auth.NewRefusalLog(o.Logger, "fathom comm")
	g.bg.Add(1)
	go g.acceptLoop()

	me := peerInfo{Addr: g.ln.Addr().String(), Host: hostID(), Shm: o.Transport != TransportTCP, Pid: os.Getpid()}
	b, _ := json.Marshal(me)
	if err := g.st.Set(ctx, keyRank(g.rank), b); err != nil {
		return nil, err
	}
	infos := make([]peerInfo, g.size)
	for r := 0; r < g.size; r++ {
		v, err := g.st.Get(ctx, keyRank(r))
		if err != nil {
			return nil, fmt.Errorf("waiting for rank %d to publish its address: %w", r, err)
		}
		if err := json.Unmarshal(v, &infos[r]); err != nil {
			return nil, fmt.Errorf("rank %d published a malformed address %q: %v", r, v, err)
		}
	}
	if err := g.connect(ctx, infos); err != nil {
		return nil, err
	}
	if err := g.setupShm(ctx, infos); err != nil {
		return nil, err
	}
	g.bg.Add(1)
	go g.watchAbort()
	if g.beat != nil {
		g.startHeartbeat()
	}
	go g.worker()
	return g, nil
}

func (g *Group) openStore(ctx context.Context) error {
	o := &g.opts
	dial := o.NewStore
	if dial == nil {
		addr := net.JoinHostPort(o.MasterAddr, strconv.Itoa(o.MasterPort))
		if g.rank == 0 && !o.StoreHosted {
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("rank 0 cannot host the store on MASTER_ADDR:MASTER_PORT %s: %w", addr, err)
			}
			g.server = store.Serve(ln, o.Token, o.Logger)
		}
		dial = func(ctx context.Context) (store.Store, error) {
			c, err := store.Dial(ctx, addr, o.Token, g.rank)
			if err != nil {
				return nil, err // not a typed nil in the interface
			}
			return c, nil
		}
	}
	open := func() (store.Store, error) {
		st, err := dial(ctx)
		if err != nil {
			return nil, err
		}
		if o.Generation == 0 {
			return st, nil
		}
		return store.WithPrefix(st, "g"+strconv.Itoa(o.Generation)+"/"), nil
	}
	var err error
	if g.st, err = open(); err != nil {
		return err
	}
	if g.watch, err = open(); err != nil {
		return err
	}
	if o.HeartbeatTimeout > 0 {
		if g.beat, err = open(); err != nil {
			return err
		}
	}
	return nil
}

// agreeOnJob: rank 0 draws a random job id and announces the world size;
// the others check that they were started for the same job shape.
func (g *Group) agreeOnJob(ctx context.Context) error {
	if g.rank == 0 {
		id := make([]byte, 8)
		rand.Read(id)
		b, _ := json.Marshal(jobInfo{ID: hex.EncodeToString(id), World: g.size})
		if err := g.st.Set(ctx, keyJob, b); err != nil {
			return err
		}
	}
	v, err := g.st.Get(ctx, keyJob)
	if err != nil {
		return fmt.Errorf("waiting for rank 0 to announce the job: %w", err)
	}
	var j jobInfo
	if err := json.Unmarshal(v, &j); err != nil || len(j.ID) != 16 {
		return fmt.Errorf("malformed job announcement %q", v)
	}
	if j.World != g.size {
		return fmt.Errorf("rank 0 runs a job of WORLD_SIZE %d, this rank was started with %d", j.World, g.size)
	}
	g.jobID = j.ID
	return nil
}

// connect: rank r dials every lower rank and accepts every higher one.
func (g *Group) connect(ctx context.Context, infos []peerInfo) error {
	g.links = make([]link, g.size)
	g.conns = make([]*net.TCPConn, g.size)
	for r := 0; r < g.rank; r++ {
		c, err := g.dial(ctx, r, infos[r].Addr)
		if err != nil {
			return err
		}
		g.conns[r] = c
	}
	for missing := g.size - 1 - g.rank; missing > 0; missing-- {
		select {
		case a := <-g.incoming:
			g.conns[a.rank] = a.conn
		case <-ctx.Done():
			var wait []int
			for r := g.rank + 1; r < g.size; r++ {
				if g.conns[r] == nil {
					wait = append(wait, r)
				}
			}
			return fmt.Errorf("ranks %v never connected: %w", wait, ctx.Err())
		}
	}
	for r, c := range g.conns {
		if c != nil {
			g.links[r] = newTCPLink(g, r, c)
		}
	}
	return nil
}

func (g *Group) dial(ctx context.Context, r int, addr string) (*net.TCPConn, error) {
	var last error
	for attempt := 0; attempt < 1000; attempt++ {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			tc := c.(*net.TCPConn)
			dl := time.Now().Add(15 * time.Second)
			if err = auth.Client(tc, g.opts.Token, auth.KindPeer, g.rank, dl); err == nil {
				err = g.sendHello(tc, dl)
			}
			if err == nil {
				return tc, nil
			}
			tc.Close()
			if errors.Is(err, auth.ErrRefused) {
				return nil, fmt.Errorf("rank %d at %s: %w", r, addr, err)
			}
		}
		last = err
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("cannot connect to rank %d at %s: %v", r, addr, last)
		case <-time.After(time.Duration(min(attempt+1, 20)) * 10 * time.Millisecond):
		}
	}
	return nil, fmt.Errorf("cannot connect to rank %d at %s: %v", r, addr, last)
}

// sendHello sends the job id after authentication, so a worker of another
// job that happens to share the token cannot join.
func (g *Group) sendHello(c *net.TCPConn, dl time.Time) error {
	c.SetDeadline(dl)
	defer c.SetDeadline(time.Time{})
	if _, err := c.Write([]byte(g.jobID)); err != nil {
		return err
	}
	var ok [1]byte
	if _, err := io.ReadFull(c, ok[:]); err != nil || ok[0] != 1 {
		return fmt.Errorf("peer refused job %s: %w", g.jobID, auth.ErrRefused)
	}
	return nil
}

func (g *Group) acceptLoop() {
	defer g.bg.Done()
	var mu sync.Mutex
	seen := map[int]bool{}
	for {
		c, err := g.ln.Accept()
		if err != nil {
			if g.closing.Load() || errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		go func(c *net.TCPConn) {
			remote := c.RemoteAddr().String()
			dl := time.Now().Add(15 * time.Second)
			claim, err := auth.Server(c, g.opts.Token, auth.KindPeer, dl)
			if err != nil {
				g.refuse.Warn("fathom comm: refused connection", "rank", g.rank, "remote", remote, "rank_claim", claim, "err", err)
				c.Close()
				return
			}
			c.SetDeadline(dl)
			id := make([]byte, len(g.jobID))
			if _, err := io.ReadFull(c, id); err != nil || string(id) != g.jobID {
				g.refuse.Warn("fathom comm: refused connection from another job", "rank", g.rank, "remote", remote, "rank_claim", claim)
				c.Write([]byte{0})
				c.Close()
				return
			}
			mu.Lock()
			bad := claim <= g.rank || claim >= g.size || seen[claim]
			seen[claim] = true
			mu.Unlock()
			if bad {
				g.refuse.Warn("fathom comm: refused connection with an impossible or duplicate rank claim", "rank", g.rank, "remote", remote, "rank_claim", claim)
				c.Write([]byte{0})
				c.Close()
				return
			}
			c.SetDeadline(time.Time{})
			if _, err := c.Write([]byte{1}); err != nil {
				c.Close()
				return
			}
			g.incoming <- accepted{rank: claim, conn: c}
		}(c.(*net.TCPConn))
	}
}

// watchAbort waits for another rank to publish an abort and aborts this rank
// too, so ranks not adjacent to a failure stop at once instead of waiting for
// their timeout.
func (g *Group) watchAbort() {
	defer g.bg.Done()
	v, err := g.watch.Get(context.Background(), keyAbort)
	if err != nil {
		if !g.closing.Load() {
			g.abort(&PeerLostError{Rank: 0, ReportedBy: g.rank,
				Err: fmt.Errorf("connection to the rendezvous store hosted by rank 0 lost: %w", err)}, false)
		}
		return
	}
	var m abortMsg
	if json.Unmarshal(v, &m) != nil {
		m = abortMsg{By: -1, Lost: -1, Reason: string(v)}
	}
	if m.By == g.rank {
		return
	}
	var ab error = &abortError{By: m.By, Reason: m.Reason}
	if m.Lost >= 0 {
		ab = &PeerLostError{Rank: m.Lost, ReportedBy: m.By, Reason: m.Reason}
	}
	// The aborting rank will not join the close barrier: end it, whether
	// this rank is in it already or gets there later.
	g.abortMu.Lock()
	g.closeAbort = ab
	if g.closeCancel != nil {
		g.closeCancel()
	}
	g.abortMu.Unlock()
	if !g.closing.Load() {
		g.abort(ab, false)
	}
}

// abort records the first fatal error, interrupts every blocked transfer and,
// if the error arose here, tells the other ranks through the store.
func (g *Group) abort(err error, publish bool) {
	g.abortMu.Lock()
	if g.abortErr != nil {
		g.abortMu.Unlock()
		return
	}
	g.abortErr = err
	g.aborted.Store(true)
	g.abortMu.Unlock()
	for _, c := range g.conns {
		if c != nil {
			c.SetDeadline(time.Unix(1, 0))
		}
	}
	if publish && g.st != nil {
		// synchronous: a rank that exits right after its error must have
		// told the others first
		g.publishAbort(err)
	}
}

func (g *Group) publishAbort(err error) {
	m := abortMsg{By: g.rank, Lost: -1, Reason: err.Error()}
	var pe *PeerLostError
	if errors.As(err, &pe) {
		m.Lost = pe.Rank
		if pe.Err != nil {
			m.Reason = pe.Err.Error()
		}
	}
	b, _ := json.Marshal(m)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	g.st.Set(ctx, keyAbort, b)
}

// remoteAbort returns the abort another rank already published, if any. A
// rank whose peer's connection closes checks this first: the peer may have
// exited because of an earlier failure elsewhere, which is the one to report.
func (g *Group) remoteAbort() error {
	if g.st == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	v, err := g.st.Get(ctx, keyAbort)
	if err != nil {
		return nil
	}
	var m abortMsg
	if json.Unmarshal(v, &m) != nil || m.By == g.rank {
		return nil
	}
	if m.Lost >= 0 {
		return &PeerLostError{Rank: m.Lost, ReportedBy: m.By, Reason: m.Reason}
	}
	return &abortError{By: m.By, Reason: m.Reason}
}

func (g *Group) abortError() error {
	g.abortMu.Lock()
	defer g.abortMu.Unlock()
	return g.abortErr
}

// linkError turns a transport error with peer into the group's error.
func (g *Group) linkError(peer int, verb string, err error) error {
	if g.aborted.Load() {
		return g.abortError()
	}
	if g.closing.Load() {
		return ErrClosed
	}
	if remote := g.remoteAbort(); remote != nil {
		g.abort(remote, false)
		return g.abortError()
	}
	// The abort watcher may have just received an abort it has not applied
	// yet: when rank 0, which hosts the store, reports a lost rank and
	// exits, its links close at once and the store can no longer be asked.
	// Give the watcher a moment so the error names the rank really lost.
	if spinUntilAborted(g, 100*time.Millisecond) {
		return g.abortError()
	}
	pe := &PeerLostError{Rank: peer, ReportedBy: g.rank, Err: fmt.Errorf("%s rank %d: %w", verb, peer, err)}
	g.abort(pe, true)
	return g.abortError()
}

func (g *Group) protocolError(err error) error {
	g.abort(fmt.Errorf("%w: %v", ErrProtocol, err), true)
	return g.abortError()
}

func (g *Group) sizeError(peer, got, want int) error {
	return g.protocolError(fmt.Errorf("rank %d sent %d bytes, rank %d expected %d "+
		"(ranks called collectives with different lengths or in a different order)", peer, got, g.rank, want))
}

// Rank is this process's rank in [0, Size()) (in a subgroup, its rank
// there; Members maps it to the job's RANK).
func (g *Group) Rank() int { return g.rank }

// Size is the number of ranks (WORLD_SIZE; a subgroup's member count).
func (g *Group) Size() int { return g.size }

// LocalRank is LOCAL_RANK (-1 if the launcher did not set it).
func (g *Group) LocalRank() int { return g.opts.LocalRank }

// Options returns the options the group runs with (defaults filled in; a
// subgroup's Rank and WorldSize are its own).
func (g *Group) Options() Options { return g.opts }

// Transport names the transport to peer ("tcp" or "shm"; "self" for this
// rank or a rank out of range).
func (g *Group) Transport(peer int) string {
	if peer == g.rank || g.links == nil || peer < 0 || peer >= g.size {
		return "self"
	}
	return g.links[peer].name()
}

// Err returns the error that aborted the group, or nil. A subgroup is
// aborted with its root.
func (g *Group) Err() error { return g.root.abortError() }

// Close waits for pending operations, then (unless the group was aborted)
// waits until every rank has called Close, so no rank tears down a
// connection another still reads from, and releases everything. Rank 0 stops
// the store last. Closing a group closes its subgroups first; closing a
// subgroup only ends its operation queue (its links are the root's).
func (g *Group) Close() error {
	if g.root != g {
		g.closeQueue()
		return nil
	}
	g.subMu.Lock()
	subs := g.subs
	g.subsClosed = true
	g.subMu.Unlock()
	for i := len(subs) - 1; i >= 0; i-- {
		subs[i].closeQueue()
	}
	if !g.closeQueue() {
		return nil
	}
	var err error
	if g.size > 1 {
		g.closing.Store(true)
		if !g.aborted.Load() {
			err = g.closeBarrier()
		}
	}
	g.teardown()
	return err
}

// closeQueue refuses new operations and waits for the queued ones. It
// reports whether this call closed the queue.
func (g *Group) closeQueue() bool {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return false
	}
	g.closed = true
	g.mu.Unlock()
	close(g.ops)
	<-g.opsDone
	return true
}

func (g *Group) closeBarrier() error {
	ctx, cancel := context.WithTimeout(context.Background(), min(g.opts.Timeout, 30*time.Second))
	defer cancel()
	g.abortMu.Lock()
	g.closeCancel = cancel
	ab := g.closeAbort
	g.abortMu.Unlock()
	if ab != nil {
		return fmt.Errorf("comm: rank %d: close: %w", g.rank, ab)
	}
	// A rank that aborted meanwhile ends the barrier through closeCancel.
	remote := func(err error) error {
		g.abortMu.Lock()
		defer g.abortMu.Unlock()
		if g.closeAbort != nil {
			return fmt.Errorf("comm: rank %d: close: %w", g.rank, g.closeAbort)
		}
		return err
	}
	n, err := g.st.Add(ctx, keyClosed, 1)
	if err != nil {
		return remote(fmt.Errorf("comm: rank %d: close: %w", g.rank, err))
	}
	if n == int64(g.size) {
		if err := g.st.Set(ctx, keyClosedAll, nil); err != nil {
			return remote(fmt.Errorf("comm: rank %d: close: %w", g.rank, err))
		}
	}
	if _, err := g.st.Get(ctx, keyClosedAll); err != nil {
		var lost error
		if g.rank == 0 {
			lost = fmt.Errorf("comm: rank 0: close: not every rank closed the group: %w", err)
		}
		return remote(lost)
	}
	return nil
}

func (g *Group) teardown() {
	g.closing.Store(true)
	for _, l := range g.links {
		if l != nil {
			l.close()
		}
	}
	for _, c := range g.conns {
		if c != nil {
			c.Close()
		}
	}
	if g.ln != nil {
		g.ln.Close()
	}
	if g.watch != nil {
		g.watch.Close()
	}
	g.stopHeartbeat()
	if g.beat != nil {
		g.beat.Close()
	}
	if g.server != nil {
		g.server.Close()
	}
	g.bg.Wait() // the abort publisher may still use st
	if g.refuse != nil {
		g.refuse.Stop()
	}
	if g.st != nil {
		g.st.Close()
	}
}

// kill simulates a crash of this rank (tests): every connection is closed
// without the close protocol.
func (g *Group) kill() {
	g.closing.Store(true)
	g.abort(errors.New("killed"), false)
	g.teardown()
}

// spinUntilAborted waits up to d for the group to be aborted and reports
// whether it was.
func spinUntilAborted(g *Group, d time.Duration) bool {
	for end := time.Now().Add(d); !g.aborted.Load(); {
		if time.Now().After(end) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
	return true
}
