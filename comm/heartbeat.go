package comm

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The heartbeat names a rank that is alive but silent: stopped (SIGSTOP), in
// a stuck garbage collection, livelocked. Its kernel still acknowledges TCP
// data, so neither keep-alive nor TCP_USER_TIMEOUT fires, and without a
// heartbeat the others would wait for the whole collective timeout.
//
// Every rank bumps its counter fathom/heartbeat/<rank> in the store every
// beat interval (a fifth of Options.HeartbeatTimeout, at most 1 s) from a
// goroutine that does not depend on collective progress, and reads the
// counters of the heartbeatWatch ranks that follow it (all of them in a
// small job). A rank whose counter has not moved for HeartbeatTimeout is
// named in an abort (a *PeerLostError) that reaches every rank through the
// store; a store that does not answer for that long names rank 0, which
// hosts it. Watching a few successors rather than everyone keeps the
// store's load at (1+heartbeatWatch)·N requests per beat instead of N², and
// still names any set of silent ranks short of all: some live rank follows
// a silent one. A stopped process cannot bump its
// counter, and neither can one whose runtime no longer schedules goroutines.
//
// Silence is measured on this rank's monotonic clock, and only while this
// rank was itself running: after a gap in its own ticks (this process was
// stopped, the machine suspended) every peer gets a fresh start.

func keyHeartbeat(r int) string { return "fathom/heartbeat/" + strconv.Itoa(r) }

// heartbeatWatch is how many following ranks each rank watches.
const heartbeatWatch = 8

// heartbeat is the state of the root group's heartbeat goroutine; mu guards
// the fields read by silentRanks.
type heartbeat struct {
	stop     chan struct{}
	stopOnce sync.Once

	watched []int // the ranks this rank watches

	mu        sync.Mutex
	count     []int64     // last counter seen, by rank
	heard     []time.Time // when it last changed (or the watch started)
	storeSeen time.Time   // when the store last answered
}

// beatInterval is how often a rank bumps its counter and checks the others.
func beatInterval(timeout time.Duration) time.Duration {
	return min(max(timeout/5, 20*time.Millisecond), time.Second)
}

func (g *Group) startHeartbeat() {
	now := time.Now()
	g.hb.stop = make(chan struct{})
	g.hb.count = make([]int64, g.size)
	g.hb.heard = make([]time.Time, g.size)
	for r := range g.hb.heard {
		g.hb.heard[r] = now
	}
	g.hb.storeSeen = now
	for i := 1; i <= min(g.size-1, heartbeatWatch); i++ {
		g.hb.watched = append(g.hb.watched, (g.rank+i)%g.size)
	}
	g.bg.Add(1)
	go g.heartbeatLoop()
}

func (g *Group) stopHeartbeat() {
	if g.hb.stop != nil {
		g.hb.stopOnce.Do(func() { close(g.hb.stop) })
	}
}

func (g *Group) heartbeatLoop() {
	defer g.bg.Done()
	timeout := g.opts.HeartbeatTimeout
	every := beatInterval(timeout)
	tick := time.NewTicker(every)
	defer tick.Stop()
	last := time.Now()
	for {
		select {
		case <-g.hb.stop:
			return
		case <-tick.C:
		}
		if now := time.Now(); now.Sub(last) > timeout/2 {
			// this process did not run for a while: it cannot tell who
			// else was silent, so everyone starts afresh
			g.hb.restart(now)
		}
		g.beatOnce(every)
		last = time.Now() // a slow store is not a pause of this process
		if g.closing.Load() || g.aborted.Load() {
			continue // keep beating for the others, judge no one
		}
		if err := g.hb.verdict(time.Now(), timeout, g.rank); err != nil {
			// a silent store cannot carry the abort: publishing would only
			// hold up Close
			g.abort(err, !g.hb.storeSilent(time.Now(), timeout))
		}
	}
}

func (h *heartbeat) restart(now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for r := range h.heard {
		h.heard[r] = now
	}
	h.storeSeen = now
}

// beatOnce bumps this rank's counter and reads every other rank's, each
// request bounded by every.
func (g *Group) beatOnce(every time.Duration) {
	ask := func(r int, delta int64) (int64, bool) {
		ctx, cancel := context.WithTimeout(context.Background(), every)
		defer cancel()
		v, err := g.beat.Add(ctx, keyHeartbeat(r), delta)
		return v, err == nil
	}
	if _, ok := ask(g.rank, 1); !ok {
		return
	}
	now := time.Now()
	g.hb.mu.Lock()
	g.hb.storeSeen = now
	g.hb.mu.Unlock()
	for _, r := range g.hb.watched {
		v, ok := ask(r, 0)
		if !ok {
			return
		}
		g.hb.mu.Lock()
		if v != g.hb.count[r] {
			g.hb.count[r], g.hb.heard[r] = v, time.Now()
		}
		g.hb.mu.Unlock()
	}
}

// storeSilent reports whether the store has not answered for timeout.
func (h *heartbeat) storeSilent(now time.Time, timeout time.Duration) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return now.Sub(h.storeSeen) > timeout
}

// verdict returns the error naming the ranks silent for longer than
// timeout at now, or nil; self is the judging rank.
func (h *heartbeat) verdict(now time.Time, timeout time.Duration, self int) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if self != 0 && now.Sub(h.storeSeen) > timeout {
		return &PeerLostError{Rank: 0, ReportedBy: self, Reason: fmt.Sprintf(
			"the store hosted by rank 0 has not answered for %v: rank 0 has not been heard from (stopped or hung?)",
			timeout)}
	}
	var silent []int
	for _, r := range h.watched {
		if now.Sub(h.heard[r]) > timeout {
			silent = append(silent, r)
		}
	}
	if len(silent) == 0 {
		return nil
	}
	slices.Sort(silent)
	return &PeerLostError{Rank: silent[0], ReportedBy: self,
		Reason: fmt.Sprintf("%s not been heard from for %v (stopped or hung?)", ranksPhrase(silent), timeout)}
}

// silentRanks lists the watched ranks not heard from for longer than d,
// for the timeout message.
func (g *Group) silentRanks(d time.Duration) []int {
	h := &g.root.hb
	if h.stop == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	var silent []int
	for _, r := range h.watched {
		if now.Sub(h.heard[r]) > d {
			silent = append(silent, r)
		}
	}
	slices.Sort(silent)
	return silent
}

// ranksPhrase: "rank 1 has", "ranks 1, 3 have".
func ranksPhrase(rs []int) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = strconv.Itoa(r)
	}
	if len(rs) == 1 {
		return "rank " + s[0] + " has"
	}
	return "ranks " + strings.Join(s, ", ") + " have"
}
