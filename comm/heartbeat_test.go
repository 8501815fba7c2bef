package comm

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestHeartbeatVerdict(t *testing.T) {
	start := time.Unix(1000, 0)
	const timeout = 10 * time.Second
	for _, test := range []struct {
		name      string
		heard     []time.Duration // after start, by rank
		storeSeen time.Duration
		self      int
		now       time.Duration
		want      string // "" for no verdict
		wantRank  int
	}{
		{name: "all fresh", heard: []time.Duration{0, 0, 0}, self: 0, now: 5 * time.Second},
		{name: "one silent", heard: []time.Duration{9e9, 0, 9e9}, storeSeen: 9e9, self: 0, now: 11 * time.Second,
			want: "rank 1 has not been heard from for 10s (stopped or hung?)", wantRank: 1},
		{name: "two silent", heard: []time.Duration{0, 0, 9e9, 0}, storeSeen: 11e9, self: 2, now: 11 * time.Second,
			want: "ranks 0, 1, 3 have not been heard from", wantRank: 0},
		{name: "self never judged", heard: []time.Duration{9e9, 0}, storeSeen: 9e9, self: 1, now: 11 * time.Second},
		{name: "store silent names rank 0", heard: []time.Duration{0, 0}, self: 1, now: 11 * time.Second,
			want: "store hosted by rank 0 has not answered", wantRank: 0},
	} {
		h := heartbeat{storeSeen: start.Add(test.storeSeen)}
		for r, d := range test.heard {
			h.heard = append(h.heard, start.Add(d))
			if r != test.self {
				h.watched = append(h.watched, r)
			}
		}
		err := h.verdict(start.Add(test.now), timeout, test.self)
		if test.want == "" {
			if err != nil {
				t.Errorf("%s: %v, want no verdict", test.name, err)
			}
			continue
		}
		var pe *PeerLostError
		if !errors.As(err, &pe) || pe.Rank != test.wantRank || !strings.Contains(err.Error(), test.want) {
			t.Errorf("%s: %v, want rank %d named with %q", test.name, err, test.wantRank, test.want)
		}
	}
}

// TestHeartbeatRestartAfterOwnPause: a rank that was itself paused does not
// blame the others for its own silence.
func TestHeartbeatRestartAfterOwnPause(t *testing.T) {
	start := time.Unix(1000, 0)
	h := heartbeat{heard: []time.Time{start, start}, watched: []int{0}, storeSeen: start}
	h.restart(start.Add(time.Minute))
	if err := h.verdict(start.Add(time.Minute+time.Second), 10*time.Second, 1); err != nil {
		t.Errorf("after a restart: %v", err)
	}
}

// TestHeartbeatIdleGroupStaysUp: ranks that do nothing for several
// heartbeat timeouts are not declared silent.
func TestHeartbeatIdleGroupStaysUp(t *testing.T) {
	gs := newGroups(t, 3, TransportTCP, func(o *Options) { o.HeartbeatTimeout = 300 * time.Millisecond })
	time.Sleep(1200 * time.Millisecond)
	for r, g := range gs {
		if err := g.Err(); err != nil {
			t.Errorf("rank %d aborted while idle: %v", r, err)
		}
	}
	mustAll(t, "allreduce after idling", onAll(gs, func(g *Group) error { return AllReduce(g, make([]float32, 8), Sum) }))
}

// TestHeartbeatSilentRankNamedByAll: in a job larger than heartbeatWatch+1
// (so not every rank watches every other), a rank whose heartbeat stops is
// named by every rank: its watchers detect it, the store carries the abort.
func TestHeartbeatSilentRankNamedByAll(t *testing.T) {
	const n, silent = heartbeatWatch + 3, 5
	gs := newGroups(t, n, TransportTCP, func(o *Options) { o.HeartbeatTimeout = 500 * time.Millisecond })
	gs[silent].stopHeartbeat()
	deadline := time.Now().Add(15 * time.Second)
	for r := 0; r < n; r++ {
		for gs[r].Err() == nil && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		var pe *PeerLostError
		if err := gs[r].Err(); !errors.As(err, &pe) || pe.Rank != silent {
			t.Errorf("rank %d: %v, want rank %d named", r, err, silent)
		}
	}
}

// TestTimeoutListsSilentRanks: a collective that times out before the
// heartbeat names anyone says which ranks have not been heard from lately.
func TestTimeoutListsSilentRanks(t *testing.T) {
	gs := newGroups(t, 3, TransportTCP, func(o *Options) {
		o.Timeout = 2 * time.Second
		o.HeartbeatTimeout = 2500 * time.Millisecond // beats every 500ms: "lately" is 1.5s
	})
	gs[1].stopHeartbeat()
	errs := onAll(gs, func(g *Group) error {
		if g.Rank() == 1 {
			return nil // never joins
		}
		return AllReduce(g, make([]float64, 10), Sum)
	})
	for _, r := range []int{0, 2} {
		if !strings.Contains(errs[r].Error(), "rank 1 has not been heard from") {
			t.Errorf("rank %d: %v, want the timeout to name silent rank 1", r, errs[r])
		}
	}
}
