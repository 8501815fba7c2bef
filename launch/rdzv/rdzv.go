package rdzv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Defaults used when a Config field is left at its zero value.
const (
	DefaultTTL            = 5 * time.Second
	DefaultLastCall       = 3 * time.Second
	DefaultRequestTimeout = 5 * time.Second
	DefaultTimeout        = 5 * time.Minute
	DefaultPoll           = 100 * time.Millisecond
)

// Sentinel errors; test with errors.Is.
var (
	// ErrConfig: the Config is unusable.
	ErrConfig = errors.New("rdzv: invalid config")
	// ErrTimeout: a round did not form (or its store was not published)
	// within Config.Timeout.
	ErrTimeout = errors.New("rdzv: rendezvous timed out")
	// ErrEnded: the job of this id has ended (its last round's members
	// took its final verdict); a new job needs a new id.
	ErrEnded = errors.New("rdzv: the job of this rendezvous id has ended")
	// ErrLeaseLost: this node's lease expired (etcd was out of reach for
	// longer than the TTL), so the others count it as gone.
	ErrLeaseLost = errors.New("rdzv: this node's lease was lost")
)

// Config says where to meet and how big a round may be.
type Config struct {
	// Endpoints are the etcd client addresses ("host:port" or
	// "http://host:port").
	Endpoints []string
	// ID names the job: every launcher of one job uses the same.
	ID string
	// MinNodes and MaxNodes bound a round's size (1 <= MinNodes <= MaxNodes).
	MinNodes, MaxNodes int
	// Host is the address this node advertises (its round's store, when it
	// is node 0, listens there). "" means the local address from which
	// this node reaches the first etcd endpoint it can.
	Host string
	// TTL is the lease of this node's keys: after a crash the others see it
	// gone within about TTL. 0 means DefaultTTL.
	TTL time.Duration
	// LastCall is how long a round with at least MinNodes (and fewer than
	// MaxNodes) members stays open for more. 0 means DefaultLastCall;
	// negative means none.
	LastCall time.Duration
	// RequestTimeout bounds every etcd request. 0 means
	// DefaultRequestTimeout.
	RequestTimeout time.Duration
	// Timeout bounds Join and StoreAddr, and how long Watch tolerates etcd
	// being out of reach. 0 means DefaultTimeout.
	Timeout time.Duration
	// Poll is how often a waiting or watching node reads the round's keys.
	// 0 means DefaultPoll.
	Poll time.Duration
}

func (c Config) withDefaults() Config {
	if c.TTL == 0 {
		c.TTL = DefaultTTL
	}
	if c.LastCall == 0 {
		c.LastCall = DefaultLastCall
	}
	if c.LastCall < 0 {
		c.LastCall = 0
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Poll == 0 {
		c.Poll = DefaultPoll
	}
	return c
}

var idRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

// Validate reports the first problem with c, as an error wrapping ErrConfig.
func (c Config) Validate() error {
	c = c.withDefaults()
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, args...))
	}
	switch {
	case len(c.Endpoints) == 0:
		return bad("no etcd endpoint (--rdzv-endpoint HOST:PORT)")
	case !idRE.MatchString(c.ID):
		return bad("rendezvous id %q: want 1 to 128 letters, digits, '.', '_' or '-' (--rdzv-id)", c.ID)
	case c.MinNodes < 1 || c.MaxNodes < c.MinNodes:
		return bad("nodes %d:%d: want 1 <= MIN <= MAX", c.MinNodes, c.MaxNodes)
	case c.TTL < time.Second:
		return bad("lease TTL %v is under a second", c.TTL)
	case c.RequestTimeout < 0 || c.Timeout < 0 || c.Poll < 0:
		return bad("negative timeout")
	}
	for _, e := range c.Endpoints {
		if _, _, err := net.SplitHostPort(stripScheme(e)); err != nil {
			return bad("etcd endpoint %q: want HOST:PORT", e)
		}
	}
	return nil
}

func stripScheme(endpoint string) string {
	if _, rest, ok := strings.Cut(endpoint, "://"); ok {
		return strings.TrimSuffix(rest, "/")
	}
	return endpoint
}

// Prefix is the etcd key prefix of job id's rendezvous.
func Prefix(id string) string { return "/fathom/rdzv/" + id + "/" }

// Member is one node's registration in a round.
type Member struct {
	Name string `json:"name"` // unique: this node's lease, in hex
	Host string `json:"host"` // the address it advertises
	// Meta is the caller's, carried as is (package launch puts the
	// launcher's shape there, so that nodes started unalike are caught).
	Meta string `json:"meta,omitempty"`
	// Failures is how many failure restarts the node had seen used when
	// it registered; a round's count is its members' maximum.
	Failures int `json:"failures"`
}

// Round is a closed round as this node sees it.
type Round struct {
	Number  int
	Members []Member // in rank order
	Rank    int      // this node's index in Members
	// Failures is how many failure restarts the job had used before this
	// round.
	Failures int
}

// String describes the round's members for a log line.
func (r Round) String() string {
	names := make([]string, len(r.Members))
	for i, m := range r.Members {
		names[i] = m.Host + "/" + m.Name
	}
	return fmt.Sprintf("round %d: %d node(s) [%s]", r.Number, len(r.Members), strings.Join(names, " "))
}

// record is the value of round/<r>/closed.
type record struct {
	Members  []Member `json:"members"`
	Failures int      `json:"failures"`
}

// Session is one launcher's presence in the rendezvous: an etcd client and
// a lease kept alive until Close.
type Session struct {
	cfg    Config
	prefix string
	cli    *clientv3.Client
	lease  clientv3.LeaseID
	name   string
	host   string

	stopKeepAlive context.CancelFunc
	lost          chan struct{} // closed when the keep-alive stops
	closeOnce     sync.Once
}

// Open connects to etcd, takes a lease and announces this node. Close
// releases both.
func Open(ctx context.Context, cfg Config) (_ *Session, err error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Session{cfg: cfg, prefix: Prefix(cfg.ID), host: cfg.Host, lost: make(chan struct{})}
	if s.host == "" {
		if s.host, err = localAddr(ctx, cfg.Endpoints, cfg.RequestTimeout); err != nil {
			return nil, err
		}
	}
	s.cli, err = clientv3.New(clientv3.Config{
		Endpoints:   cfg.Endpoints,
		DialTimeout: cfg.RequestTimeout,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("rdzv: etcd client for %s: %w", strings.Join(cfg.Endpoints, ","), err)
	}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	rctx, cancel := s.request(ctx)
	defer cancel()
	ttl := int64((cfg.TTL + time.Second - 1) / time.Second)
	g, err := s.cli.Grant(rctx, ttl)
	if err != nil {
		return nil, fmt.Errorf("rdzv: etcd at %s: take a lease: %w", strings.Join(cfg.Endpoints, ","), err)
	}
	s.lease = g.ID
	s.name = fmt.Sprintf("%016x", int64(g.ID))
	kctx, kcancel := context.WithCancel(context.Background())
	s.stopKeepAlive = kcancel
	ka, err := s.cli.KeepAlive(kctx, s.lease)
	if err != nil {
		close(s.lost)
		return nil, fmt.Errorf("rdzv: keep the lease alive: %w", err)
	}
	go func() {
		for range ka {
		}
		close(s.lost)
	}()
	if _, err := s.cli.Put(rctx, s.prefix+"node/"+s.name, s.host, clientv3.WithLease(s.lease)); err != nil {
		return nil, fmt.Errorf("rdzv: announce this node: %w", err)
	}
	return s, nil
}

// Name is this node's unique name in the rendezvous.
func (s *Session) Name() string { return s.name }

// Host is the address this node advertises.
func (s *Session) Host() string { return s.host }

// Close revokes the lease (the others see this node leave at once, unless
// it marked the end with Final) and closes the client.
func (s *Session) Close() {
	s.closeOnce.Do(func() {
		if s.stopKeepAlive != nil {
			s.stopKeepAlive()
		}
		if s.lease != 0 {
			ctx, cancel := s.request(context.Background())
			_, _ = s.cli.Revoke(ctx, s.lease)
			cancel()
		}
		if s.cli != nil {
			s.cli.Close()
		}
		if s.stopKeepAlive != nil {
			<-s.lost
		}
	})
}

func (s *Session) request(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.cfg.RequestTimeout)
}

func (s *Session) roundPrefix(r int) string { return fmt.Sprintf("%sround/%010d/", s.prefix, r) }
func (s *Session) closedKey(r int) string   { return s.roundPrefix(r) + "closed" }

// Join takes this node into the next round after round after (-1 for a
// node that has not taken part yet) and returns it once it is closed with
// this node in it. failures is how many failure restarts this node knows
// the job has used; meta is carried to the others as Member.Meta. Join
// gives up after Config.Timeout with an error wrapping ErrTimeout, and
// returns ErrEnded when the job of this id has ended.
func (s *Session) Join(ctx context.Context, after, failures int, meta string) (Round, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, s.cfg.Timeout, ErrTimeout)
	defer cancel()
	for {
		latest, err := s.latestRound(ctx)
		if err != nil {
			return Round{}, s.joinErr(ctx, after+1, err)
		}
		r := max(after+1, latest, 0)
		ok, err := s.register(ctx, r, failures, meta)
		if err != nil {
			return Round{}, s.joinErr(ctx, r, err)
		}
		if !ok { // round r closed without us: the next one
			after = r
			continue
		}
		round, err := s.await(ctx, r)
		if errors.Is(err, errLeftOut) {
			after = r
			continue
		}
		if err != nil {
			return Round{}, s.joinErr(ctx, r, err)
		}
		return round, nil
	}
}

var errLeftOut = errors.New("left out of the round")

func (s *Session) joinErr(ctx context.Context, r int, err error) error {
	if errors.Is(context.Cause(ctx), ErrTimeout) {
		return fmt.Errorf("%w: round %d did not form within %v: %w", ErrTimeout, r, s.cfg.Timeout, err)
	}
	if errors.Is(err, ErrEnded) || errors.Is(err, ErrLeaseLost) || errors.Is(err, ErrConfig) {
		return err
	}
	return fmt.Errorf("rdzv: round %d: %w", r, err)
}

// latestRound returns the newest round with any key, -1 if none.
func (s *Session) latestRound(ctx context.Context) (int, error) {
	rctx, cancel := s.request(ctx)
	defer cancel()
	resp, err := s.cli.Get(rctx, s.prefix+"round/", append(clientv3.WithLastKey(), clientv3.WithKeysOnly())...)
	if err != nil {
		return 0, fmt.Errorf("etcd: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return -1, nil
	}
	rest := strings.TrimPrefix(string(resp.Kvs[0].Key), s.prefix+"round/")
	num, _, _ := strings.Cut(rest, "/")
	r, err := strconv.Atoi(num)
	if err != nil {
		return 0, fmt.Errorf("etcd: unexpected key %q under %s", resp.Kvs[0].Key, s.prefix)
	}
	return r, nil
}

// register adds this node to round r unless r is closed.
func (s *Session) register(ctx context.Context, r, failures int, meta string) (bool, error) {
	m, err := json.Marshal(Member{Name: s.name, Host: s.host, Meta: meta, Failures: failures})
	if err != nil {
		return false, err
	}
	rctx, cancel := s.request(ctx)
	defer cancel()
	resp, err := s.cli.Txn(rctx).
		If(clientv3.Compare(clientv3.CreateRevision(s.closedKey(r)), "=", 0)).
		Then(clientv3.OpPut(s.roundPrefix(r)+"member/"+s.name, string(m), clientv3.WithLease(s.lease))).
		Commit()
	if err != nil {
		return false, fmt.Errorf("etcd: %w", err)
	}
	return resp.Succeeded, nil
}

// snapshot is what one read of round r's keys shows.
type snapshot struct {
	members []Member // registered in r, by registration order
	closed  *record  // r's record, nil if open
	prev    *record  // r-1's record, nil if none
	final   map[int]map[string]bool
	alive   map[string]bool // node names with a live lease
	next    []Member        // registered in r+1
}

// read takes one consistent snapshot of rounds r-1, r and r+1 and of the
// live nodes.
func (s *Session) read(ctx context.Context, r int) (snapshot, error) {
	rctx, cancel := s.request(ctx)
	defer cancel()
	ops := []clientv3.Op{
		clientv3.OpGet(s.prefix+"node/", clientv3.WithPrefix(), clientv3.WithKeysOnly()),
		clientv3.OpGet(s.roundPrefix(r), clientv3.WithPrefix()),
		clientv3.OpGet(s.roundPrefix(r+1), clientv3.WithPrefix()),
	}
	if r > 0 {
		ops = append(ops, clientv3.OpGet(s.roundPrefix(r-1), clientv3.WithPrefix()))
	}
	resp, err := s.cli.Txn(rctx).Then(ops...).Commit()
	if err != nil {
		return snapshot{}, fmt.Errorf("etcd: %w", err)
	}
	snap := snapshot{alive: map[string]bool{}, final: map[int]map[string]bool{}}
	for _, kv := range resp.Responses[0].GetResponseRange().Kvs {
		snap.alive[strings.TrimPrefix(string(kv.Key), s.prefix+"node/")] = true
	}
	var members, next []*mvccpb.KeyValue
	for i, rr := range []int{r, r + 1, r - 1} {
		if i+1 >= len(resp.Responses) {
			break
		}
		for _, kv := range resp.Responses[i+1].GetResponseRange().Kvs {
			rest := strings.TrimPrefix(string(kv.Key), s.roundPrefix(rr))
			switch {
			case strings.HasPrefix(rest, "member/") && rr == r:
				members = append(members, kv)
			case strings.HasPrefix(rest, "member/") && rr == r+1:
				next = append(next, kv)
			case strings.HasPrefix(rest, "final/"):
				if snap.final[rr] == nil {
					snap.final[rr] = map[string]bool{}
				}
				snap.final[rr][strings.TrimPrefix(rest, "final/")] = true
			case rest == "closed":
				rec := &record{}
				if err := json.Unmarshal(kv.Value, rec); err != nil {
					return snapshot{}, fmt.Errorf("etcd: round %d's record: %w", rr, err)
				}
				if rr == r {
					snap.closed = rec
				} else if rr == r-1 {
					snap.prev = rec
				}
			}
		}
	}
	if snap.members, err = decodeMembers(members); err != nil {
		return snapshot{}, err
	}
	if snap.next, err = decodeMembers(next); err != nil {
		return snapshot{}, err
	}
	return snap, nil
}

// memberIndex returns the index of the member named name in ms, -1 if none.
func memberIndex(ms []Member, name string) int {
	return slices.IndexFunc(ms, func(m Member) bool { return m.Name == name })
}

// decodeMembers decodes member keys in registration order.
func decodeMembers(kvs []*mvccpb.KeyValue) ([]Member, error) {
	slices.SortFunc(kvs, func(a, b *mvccpb.KeyValue) int { return int(a.CreateRevision - b.CreateRevision) })
	out := make([]Member, len(kvs))
	for i, kv := range kvs {
		if err := json.Unmarshal(kv.Value, &out[i]); err != nil {
			return nil, fmt.Errorf("etcd: member %q: %w", kv.Key, err)
		}
	}
	return out, nil
}

// await waits until round r (which this node registered in) is closed, and
// closes it itself when it is time.
func (s *Session) await(ctx context.Context, r int) (Round, error) {
	var quorumSince time.Time // since when the round could close
	tick := time.NewTicker(s.cfg.Poll)
	defer tick.Stop()
	var snap snapshot
	timedOut := func() error {
		return fmt.Errorf("%d node(s) registered (min %d)%s: %w",
			len(snap.members), s.cfg.MinNodes, pendingNote(snap), context.Cause(ctx))
	}
	for {
		var err error
		if snap, err = s.read(ctx, r); err != nil {
			if ctx.Err() != nil {
				return Round{}, timedOut()
			}
			return Round{}, err
		}
		if snap.closed != nil {
			if i := memberIndex(snap.closed.Members, s.name); i >= 0 {
				return Round{Number: r, Members: snap.closed.Members, Rank: i, Failures: snap.closed.Failures}, nil
			}
			s.unregister(ctx, r)
			return Round{}, errLeftOut
		}
		if len(snap.final[r-1]) > 0 {
			s.unregister(ctx, r)
			return Round{}, fmt.Errorf("%w (in round %d; pick a new --rdzv-id for a new job)", ErrEnded, r-1)
		}
		if memberIndex(snap.members, s.name) < 0 {
			return Round{}, ErrLeaseLost
		}
		switch close, wait := decide(s.cfg, snap, quorumSince, time.Now()); {
		case close > 0:
			if err := s.close(ctx, r, snap.members[:close]); err != nil {
				return Round{}, err
			}
			continue // read the record back
		case wait:
			if quorumSince.IsZero() {
				quorumSince = time.Now()
			}
		default:
			quorumSince = time.Time{}
		}
		select {
		case <-ctx.Done():
			return Round{}, timedOut()
		case <-tick.C:
		}
	}
}

// decide is the closing rule: how many of the registered members to close
// the round with (0: not now), and whether the round has a quorum and is in
// its last call. quorumSince is when the quorum was first seen (zero if
// not yet).
func decide(cfg Config, snap snapshot, quorumSince, now time.Time) (close int, lastCall bool) {
	n := len(snap.members)
	switch {
	case n >= cfg.MaxNodes:
		return cfg.MaxNodes, false
	case n < cfg.MinNodes || len(pending(snap)) > 0:
		return 0, false
	case !quorumSince.IsZero() && now.Sub(quorumSince) >= cfg.LastCall:
		return n, false
	case quorumSince.IsZero() && cfg.LastCall <= 0:
		return n, false
	}
	return 0, true
}

// pending lists the members of the previous round that are alive and have
// not registered in this one yet: they are stopping their workers and on
// their way, so the round waits for them.
func pending(snap snapshot) []string {
	if snap.prev == nil {
		return nil
	}
	var out []string
	for _, m := range snap.prev.Members {
		if snap.alive[m.Name] && memberIndex(snap.members, m.Name) < 0 {
			out = append(out, m.Host+"/"+m.Name)
		}
	}
	return out
}

func pendingNote(snap snapshot) string {
	if p := pending(snap); len(p) > 0 {
		return ", waiting for " + strings.Join(p, " ") + " of the previous round"
	}
	return ""
}

// close writes round r's record unless someone did first, and deletes
// round r-2's keys (nobody reads them any more).
func (s *Session) close(ctx context.Context, r int, members []Member) error {
	failures := 0
	for _, m := range members {
		failures = max(failures, m.Failures)
	}
	rec, err := json.Marshal(record{Members: members, Failures: failures})
	if err != nil {
		return err
	}
	ops := []clientv3.Op{clientv3.OpPut(s.closedKey(r), string(rec))}
	if r >= 2 {
		ops = append(ops, clientv3.OpDelete(s.roundPrefix(r-2), clientv3.WithPrefix()))
	}
	rctx, cancel := s.request(ctx)
	defer cancel()
	_, err = s.cli.Txn(rctx).If(clientv3.Compare(clientv3.CreateRevision(s.closedKey(r)), "=", 0)).Then(ops...).Commit()
	if err != nil {
		return fmt.Errorf("etcd: close round %d: %w", r, err)
	}
	return nil
}

func (s *Session) unregister(ctx context.Context, r int) {
	rctx, cancel := s.request(context.WithoutCancel(ctx))
	defer cancel()
	_, _ = s.cli.Delete(rctx, s.roundPrefix(r)+"member/"+s.name)
}

// PublishStore announces the address of round r's store (node 0 of the
// round calls it; the key goes with its lease).
func (s *Session) PublishStore(ctx context.Context, r int, addr string) error {
	rctx, cancel := s.request(ctx)
	defer cancel()
	if _, err := s.cli.Put(rctx, s.roundPrefix(r)+"store", addr, clientv3.WithLease(s.lease)); err != nil {
		return fmt.Errorf("rdzv: publish round %d's store: %w", r, err)
	}
	return nil
}

// StoreAddr waits (at most Config.Timeout) for the address of round r's
// store.
func (s *Session) StoreAddr(ctx context.Context, r int) (string, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, s.cfg.Timeout, ErrTimeout)
	defer cancel()
	tick := time.NewTicker(s.cfg.Poll)
	defer tick.Stop()
	for {
		rctx, rcancel := s.request(ctx)
		resp, err := s.cli.Get(rctx, s.roundPrefix(r)+"store")
		rcancel()
		if err == nil && len(resp.Kvs) > 0 {
			return string(resp.Kvs[0].Value), nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("rdzv: round %d's node 0 did not publish its store: %w", r, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// Final marks that this node ends the job with round r's verdict, so that
// its leaving (Close) is not taken for a node lost mid-round.
func (s *Session) Final(ctx context.Context, r int) error {
	rctx, cancel := s.request(context.WithoutCancel(ctx))
	defer cancel()
	if _, err := s.cli.Put(rctx, s.roundPrefix(r)+"final/"+s.name, ""); err != nil {
		return fmt.Errorf("rdzv: mark the end of round %d: %w", r, err)
	}
	return nil
}

// Change is a change of membership seen while a round runs.
type Change struct {
	// What describes it: "node 10.0.0.2/694d... left", "... joined".
	What string
	// Left is set when the round cannot end normally: a member left (or
	// this node lost its lease, or etcd is out of reach). A join is not:
	// every member is still there to tell how its workers ended.
	Left bool
	// Err is set when the watch itself failed (etcd out of reach for
	// longer than Config.Timeout, or this node's lease lost).
	Err error
}

// Watch watches round r while it runs and delivers the first change of
// membership (or failure to watch) on the returned channel, once. Call
// stop when the round is over; it returns when the watch has ended.
func (s *Session) Watch(ctx context.Context, r Round) (changes <-chan Change, stop func()) {
	out := make(chan Change, 1)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(s.cfg.Poll)
		defer tick.Stop()
		var failingSince time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.lost:
				out <- Change{What: "this node's lease was lost", Left: true, Err: ErrLeaseLost}
				return
			case <-tick.C:
			}
			snap, err := s.read(ctx, r.Number)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				if failingSince.IsZero() {
					failingSince = time.Now()
				}
				if time.Since(failingSince) > s.cfg.Timeout {
					out <- Change{What: "etcd out of reach", Left: true, Err: err}
					return
				}
				continue
			}
			failingSince = time.Time{}
			if c, ok := change(r, snap, s.name, s.cfg.MaxNodes); ok {
				out <- c
				return
			}
		}
	}()
	return out, func() { cancel(); <-done }
}

// change finds a change of membership of the running round r in snap.
func change(r Round, snap snapshot, self string, maxNodes int) (Change, bool) {
	if !snap.alive[self] {
		return Change{What: "this node's lease was lost", Left: true, Err: ErrLeaseLost}, true
	}
	final := snap.final[r.Number]
	for _, m := range r.Members {
		if !snap.alive[m.Name] && !final[m.Name] {
			return Change{What: fmt.Sprintf("node %s/%s left", m.Host, m.Name), Left: true}, true
		}
	}
	for _, m := range snap.next {
		if m.Name == self {
			continue
		}
		if memberIndex(r.Members, m.Name) >= 0 {
			return Change{What: fmt.Sprintf("node %s/%s went on to round %d", m.Host, m.Name, r.Number+1)}, true
		}
		if len(r.Members) < maxNodes {
			return Change{What: fmt.Sprintf("node %s/%s joined", m.Host, m.Name)}, true
		}
	}
	return Change{}, false
}

// localAddr returns the local IP address from which this machine reaches
// the first reachable endpoint.
func localAddr(ctx context.Context, endpoints []string, timeout time.Duration) (string, error) {
	var errs []error
	for _, e := range endpoints {
		d := net.Dialer{Timeout: timeout}
		conn, err := d.DialContext(ctx, "tcp", stripScheme(e))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ip := conn.LocalAddr().(*net.TCPAddr).IP.String()
		conn.Close()
		return ip, nil
	}
	return "", fmt.Errorf("rdzv: cannot reach etcd at %s to learn this node's address (or give it with --rdzv-host): %w",
		strings.Join(endpoints, ","), errors.Join(errs...))
}
