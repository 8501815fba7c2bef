package rdzv

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/launch/rdzv/rdzvtest"
)

func members(names ...string) []Member {
	out := make([]Member, len(names))
	for i, n := range names {
		out[i] = Member{Name: n, Host: "h"}
	}
	return out
}

func TestDecide(t *testing.T) {
	t0 := time.Unix(1000, 0)
	cfg := Config{MinNodes: 2, MaxNodes: 3, LastCall: time.Second}
	alive := map[string]bool{"a": true, "b": true, "c": true}
	for _, test := range []struct {
		name     string
		snap     snapshot
		since    time.Time
		now      time.Time
		close    int
		lastCall bool
	}{
		{"below min", snapshot{members: members("a"), alive: alive}, time.Time{}, t0, 0, false},
		{"min reached: last call starts", snapshot{members: members("a", "b"), alive: alive}, time.Time{}, t0, 0, true},
		{"last call running", snapshot{members: members("a", "b"), alive: alive}, t0, t0.Add(999 * time.Millisecond), 0, true},
		{"last call over", snapshot{members: members("a", "b"), alive: alive}, t0, t0.Add(time.Second), 2, false},
		{"max: at once", snapshot{members: members("a", "b", "c"), alive: alive}, time.Time{}, t0, 3, false},
		{"beyond max: the first max", snapshot{members: members("a", "b", "c", "d"), alive: alive}, time.Time{}, t0, 3, false},
		{"survivor of the last round on its way", snapshot{members: members("a", "b"), alive: alive, prev: &record{Members: members("a", "c")}},
			t0, t0.Add(time.Hour), 0, false},
		{"dead member of the last round not awaited", snapshot{members: members("a", "b"), alive: map[string]bool{"a": true, "b": true}, prev: &record{Members: members("a", "c")}},
			t0, t0.Add(time.Second), 2, false},
		{"max even with a survivor missing", snapshot{members: members("a", "b", "d"), alive: alive, prev: &record{Members: members("c")}},
			time.Time{}, t0, 3, false},
	} {
		t.Run(test.name, func(t *testing.T) {
			close, lastCall := decide(cfg, test.snap, test.since, test.now)
			if close != test.close || lastCall != test.lastCall {
				t.Errorf("decide = %d, %v; want %d, %v", close, lastCall, test.close, test.lastCall)
			}
		})
	}
	t.Run("no last call", func(t *testing.T) {
		cfg := cfg
		cfg.LastCall = 0
		if close, _ := decide(cfg, snapshot{members: members("a", "b"), alive: alive}, time.Time{}, t0); close != 2 {
			t.Errorf("close = %d, want 2", close)
		}
	})
}

func TestChange(t *testing.T) {
	round := Round{Number: 4, Members: members("a", "b")}
	all := map[string]bool{"a": true, "b": true, "x": true}
	for _, test := range []struct {
		name    string
		r       Round
		snap    snapshot
		max     int
		want    string // "" for no change
		left    bool
		wantErr error
	}{
		{"quiet", round, snapshot{alive: all}, 3, "", false, nil},
		{"member left", round, snapshot{alive: map[string]bool{"a": true}}, 3, "node h/b left", true, nil},
		{"member ended the job", round, snapshot{alive: map[string]bool{"a": true}, final: map[int]map[string]bool{4: {"b": true}}}, 3, "", false, nil},
		{"stranger joined", round, snapshot{alive: all, next: members("x")}, 3, "node h/x joined", false, nil},
		{"stranger waits at max", round, snapshot{alive: all, next: members("x")}, 2, "", false, nil},
		{"member went on", round, snapshot{alive: all, next: members("b")}, 2, "node h/b went on to round 5", false, nil},
		{"own registration ignored", round, snapshot{alive: all, next: members("a")}, 2, "", false, nil},
		{"own lease lost", round, snapshot{alive: map[string]bool{"b": true}}, 3, "this node's lease was lost", true, ErrLeaseLost},
	} {
		t.Run(test.name, func(t *testing.T) {
			c, ok := change(test.r, test.snap, "a", test.max)
			if ok != (test.want != "") || c.What != test.want || c.Left != test.left || !errors.Is(c.Err, test.wantErr) || (test.wantErr == nil && c.Err != nil) {
				t.Errorf("change = %+v, %v; want %q (err %v)", c, ok, test.want, test.wantErr)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	good := Config{Endpoints: []string{"127.0.0.1:2379"}, ID: "job-1", MinNodes: 1, MaxNodes: 2}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, test := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Endpoints = nil }, "no etcd endpoint"},
		{func(c *Config) { c.Endpoints = []string{"nohost"} }, "want HOST:PORT"},
		{func(c *Config) { c.ID = "" }, "rendezvous id"},
		{func(c *Config) { c.ID = "a/b" }, "rendezvous id"},
		{func(c *Config) { c.MinNodes = 3 }, "MIN <= MAX"},
		{func(c *Config) { c.TTL = time.Millisecond }, "TTL"},
	} {
		c := good
		test.edit(&c)
		if err := c.Validate(); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), test.want) {
			t.Errorf("Validate(%+v) = %v, want %q", c, err, test.want)
		}
	}
}

// testConfig is a Config with short waits, for a server at endpoint.
func testConfig(endpoint, id string, minNodes, maxNodes int) Config {
	return Config{Endpoints: []string{endpoint}, ID: id, MinNodes: minNodes, MaxNodes: maxNodes, Host: "127.0.0.1",
		TTL: 2 * time.Second, LastCall: 200 * time.Millisecond, Timeout: 15 * time.Second, Poll: 20 * time.Millisecond}
}

func open(t *testing.T, cfg Config) *Session {
	t.Helper()
	s, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// One etcd serves every scenario below, each under its own id.
func TestWithEtcd(t *testing.T) {
	endpoint := rdzvtest.Start(t)
	ctx := context.Background()

	t.Run("two nodes form one round", func(t *testing.T) {
		type joined struct {
			r   Round
			err error
		}
		ch := make(chan joined, 2)
		sessions := []*Session{open(t, testConfig(endpoint, "two", 2, 2)), open(t, testConfig(endpoint, "two", 2, 2))}
		for _, s := range sessions {
			go func() { r, err := s.Join(ctx, -1, 0, "shape"); ch <- joined{r, err} }()
		}
		ranks := map[int]bool{}
		for range 2 {
			j := <-ch
			if j.err != nil {
				t.Fatal(j.err)
			}
			if j.r.Number != 0 || len(j.r.Members) != 2 || j.r.Members[j.r.Rank].Meta != "shape" {
				t.Errorf("round %+v", j.r)
			}
			ranks[j.r.Rank] = true
		}
		if len(ranks) != 2 {
			t.Errorf("ranks %v, want 0 and 1", ranks)
		}
	})

	t.Run("min not reached", func(t *testing.T) {
		cfg := testConfig(endpoint, "alone", 2, 3)
		cfg.Timeout = 2 * time.Second
		s := open(t, cfg)
		_, err := s.Join(ctx, -1, 0, "")
		if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "registered (min 2)") {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("join and leave are seen", func(t *testing.T) {
		a := open(t, testConfig(endpoint, "grow", 1, 2))
		ra, err := a.Join(ctx, -1, 0, "")
		if err != nil || ra.Number != 0 || len(ra.Members) != 1 {
			t.Fatalf("A: %+v, %v", ra, err)
		}
		if err := a.PublishStore(ctx, 0, "127.0.0.1:1"); err != nil {
			t.Fatal(err)
		}
		if addr, err := a.StoreAddr(ctx, 0); err != nil || addr != "127.0.0.1:1" {
			t.Fatalf("store %q, %v", addr, err)
		}
		changes, stop := a.Watch(ctx, ra)
		b := open(t, testConfig(endpoint, "grow", 1, 2))
		rbc := make(chan Round, 1)
		go func() {
			r, err := b.Join(ctx, -1, 0, "")
			if err != nil {
				t.Error(err)
			}
			rbc <- r
		}()
		c := <-changes // bounded: B's Join times out otherwise, and then the test fails
		stop()
		if c.Err != nil || !strings.Contains(c.What, "joined") {
			t.Fatalf("change %+v", c)
		}
		ra, err = a.Join(ctx, ra.Number, ra.Failures+1, "")
		rb := <-rbc
		if err != nil || ra.Number != 1 || len(ra.Members) != 2 || rb.Number != 1 || rb.Rank == ra.Rank {
			t.Fatalf("round 1: A %+v (%v), B %+v", ra, err, rb)
		}
		if ra.Failures != 1 || rb.Failures != 1 {
			t.Errorf("failures %d, %d; want the maximum, 1", ra.Failures, rb.Failures)
		}
		changes, stop = a.Watch(ctx, ra)
		defer stop()
		b.Close()
		if c := <-changes; c.Err != nil || !strings.Contains(c.What, b.Name()+" left") {
			t.Fatalf("change %+v", c)
		}
	})

	t.Run("ended job", func(t *testing.T) {
		a := open(t, testConfig(endpoint, "ended", 1, 1))
		r, err := a.Join(ctx, -1, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Final(ctx, r.Number); err != nil {
			t.Fatal(err)
		}
		a.Close()
		b := open(t, testConfig(endpoint, "ended", 1, 1))
		if _, err := b.Join(ctx, -1, 0, ""); !errors.Is(err, ErrEnded) {
			t.Fatalf("err = %v, want ErrEnded", err)
		}
	})
}
