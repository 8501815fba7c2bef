package comm

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// subgroup makes the subgroup of ranks (ranks of the groups gs, indexed by
// rank) on every member and returns the member groups by subgroup rank.
// Non-members must be refused with ErrNotMember.
func subgroup(t *testing.T, gs []*Group, ranks []int) []*Group {
	t.Helper()
	subs := make([]*Group, len(ranks))
	for r, g := range gs {
		sub, err := g.Subgroup(ranks)
		i := slices.Index(ranks, r)
		if i < 0 {
			if !errors.Is(err, ErrNotMember) || sub != nil {
				t.Fatalf("Subgroup(%v) on non-member rank %d = %v, %v; want ErrNotMember", ranks, r, sub, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Subgroup(%v) on rank %d: %v", ranks, r, err)
		}
		if sub.Rank() != i || sub.Size() != len(ranks) {
			t.Fatalf("Subgroup(%v) on rank %d: rank %d of %d, want %d of %d", ranks, r, sub.Rank(), sub.Size(), i, len(ranks))
		}
		subs[i] = sub
	}
	return subs
}

// TestSubgroupConformance runs the conformance suite on subgroups of a
// world of 4 (two disjoint pairs, a triple, the whole world reordered) and
// on a subgroup of a subgroup, over TCP and shared memory.
func TestSubgroupConformance(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			gs := newGroups(t, 4, tr.tr, nil)
			for _, ranks := range [][]int{{0, 2}, {1, 3}, {1, 2, 3}, {3, 1, 0, 2}, {2}} {
				subs := subgroup(t, gs, ranks)
				for i, sub := range subs {
					if got := sub.Members(); !slices.Equal(got, ranks) {
						t.Fatalf("subgroup %v rank %d: Members() = %v", ranks, i, got)
					}
				}
				for _, algo := range algos {
					checkAllReduce[float32](t, subs, algo)
					checkAllReduce[float64](t, subs, algo)
					checkAllReduce[int64](t, subs, algo)
				}
				checkCollectives[float32](t, subs)
				checkCollectives[int64](t, subs)
			}
			// a subgroup of a subgroup: ranks 2 and 0 of {1,2,3} are job
			// ranks 3 and 1
			outer := subgroup(t, gs, []int{1, 2, 3})
			inner := subgroup(t, outer, []int{2, 0})
			if got := inner[0].Members(); !slices.Equal(got, []int{3, 1}) {
				t.Fatalf("nested subgroup: Members() = %v, want [3 1]", got)
			}
			for _, algo := range algos {
				checkAllReduce[float32](t, inner, algo)
			}
			checkCollectives[float64](t, inner)
		})
	}
}

// TestSubgroupConcurrent runs all-reduces on two disjoint subgroups, on a
// subgroup overlapping both and on the whole group at the same time, from
// separate goroutines of every rank, so messages of four groups share the
// links; every result must equal the single-process sum.
func TestSubgroupConcurrent(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			const world, iters = 4, 30
			gs := newGroups(t, world, tr.tr, nil)
			lists := [][]int{{0, 2}, {1, 3}, {3, 2, 1}}
			groups := [][]*Group{gs} // groups[k][i]: rank i of group k
			for _, ranks := range lists {
				groups = append(groups, subgroup(t, gs, ranks))
			}
			members := [][]int{{0, 1, 2, 3}, lists[0], lists[1], lists[2]}
			start := time.Now()
			var wg sync.WaitGroup
			errs := make(chan error, 64)
			for k, grp := range groups {
				for i, g := range grp {
					wg.Add(1)
					go func() {
						defer wg.Done()
						errs <- runSums(g, members[k], i, k, iters)
					}()
				}
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("concurrent collectives took %v", d)
			}
		})
	}
}

// runSums runs iters all-reduces of mixed sizes and algorithms, broadcasts
// and all-gathers on g, rank i of group k with the given job ranks,
// checking each result.
func runSums(g *Group, members []int, i, k, iters int) error {
	for it := 0; it < iters; it++ {
		n := []int{1, 100, 70000, 300000}[it%4]
		algo := algos[it%len(algos)]
		value := func(jobRank int) float64 { return float64(1000*k + 10*jobRank + it) }
		x := make([]float64, n)
		for j := range x {
			x[j] = value(members[i]) + float64(j%5)
		}
		if err := AllReduceWith(g, x, Sum, algo); err != nil {
			return fmt.Errorf("group %d rank %d iteration %d: %w", k, i, it, err)
		}
		for j, v := range x {
			want := 0.0
			for _, m := range members {
				want += value(m) + float64(j%5)
			}
			if v != want {
				return fmt.Errorf("group %v rank %d iteration %d (%v, %d elements): [%d] = %v, want %v", members, i, it, algo, n, j, v, want)
			}
		}
		// a broadcast from a rotating root and an all-gather, checked too
		root := it % len(members)
		b := []int64{int64(100*k + i), int64(it)}
		if err := Broadcast(g, b, root); err != nil {
			return fmt.Errorf("group %d rank %d iteration %d: %w", k, i, it, err)
		}
		if b[0] != int64(100*k+root) || b[1] != int64(it) {
			return fmt.Errorf("group %v rank %d iteration %d: broadcast from %d gave %v", members, i, it, root, b)
		}
		all := make([]int64, len(members))
		if err := AllGather(g, all, []int64{int64(members[i])}); err != nil {
			return fmt.Errorf("group %d rank %d iteration %d: %w", k, i, it, err)
		}
		for q, v := range all {
			if v != int64(members[q]) {
				return fmt.Errorf("group %v rank %d iteration %d: all-gather gave %v", members, i, it, all)
			}
		}
	}
	return Barrier(g)
}

// TestSubgroupTagsApart: point-to-point messages with the same tag between
// the same pair of ranks, in the whole group and in a subgroup, are
// received by the group they were sent in, whatever the order.
func TestSubgroupTagsApart(t *testing.T) {
	gs := newGroups(t, 3, TransportTCP, nil)
	subs := subgroup(t, gs, []int{2, 0}) // job rank 2 is subgroup rank 0
	mustAll(t, "send/recv", onAll(gs, func(g *Group) error {
		switch g.Rank() {
		case 2:
			if err := Send(g, []int64{1, 1}, 0, 5); err != nil {
				return err
			}
			return Send(subs[0], []int64{2, 2}, 1, 5)
		case 0:
			sub, parent := make([]int64, 2), make([]int64, 2)
			if err := Recv(subs[1], sub, 0, 5); err != nil { // the parent's message comes first and is kept
				return err
			}
			if err := Recv(g, parent, 2, 5); err != nil {
				return err
			}
			if sub[0] != 2 || parent[0] != 1 {
				return fmt.Errorf("subgroup got %v, group got %v; want [2 2] and [1 1]", sub, parent)
			}
		}
		return nil
	}))
}

func TestSubgroupBadRanks(t *testing.T) {
	gs := newGroups(t, 3, TransportTCP, nil)
	g := gs[1]
	for _, test := range []struct {
		ranks []int
		want  error
		msg   string
	}{
		{nil, ErrBadRanks, "no ranks"},
		{[]int{}, ErrBadRanks, "no ranks"},
		{[]int{0, 1, 1}, ErrBadRanks, "rank 1 listed twice"},
		{[]int{1, 3}, ErrBadRanks, "rank 3 out of range for a group of 3"},
		{[]int{-1, 1}, ErrBadRanks, "rank -1 out of range"},
		{[]int{0, 2}, ErrNotMember, "rank 1"},
	} {
		sub, err := g.Subgroup(test.ranks)
		if sub != nil || !errors.Is(err, test.want) || !strings.Contains(err.Error(), test.msg) {
			t.Errorf("Subgroup(%v) = %v, %v; want an error wrapping %v that says %q", test.ranks, sub, err, test.want, test.msg)
		}
	}
	// the rank list of a subgroup is checked against the subgroup
	sub, err := g.Subgroup([]int{2, 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sub.Subgroup([]int{0, 2}); !errors.Is(err, ErrBadRanks) {
		t.Errorf("rank 2 of a subgroup of 2: %v, want ErrBadRanks", err)
	}
	if _, err := sub.Subgroup([]int{0}); !errors.Is(err, ErrNotMember) || !strings.Contains(err.Error(), "rank 1 of subgroup [2 1]") {
		t.Errorf("non-member of a nested subgroup: %v, want ErrNotMember naming rank 1 of subgroup [2 1]", err)
	}
	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}
	if err := Barrier(sub); !errors.Is(err, ErrClosed) {
		t.Errorf("barrier on a closed subgroup: %v, want ErrClosed", err)
	}
	if _, err := sub.Subgroup([]int{1}); !errors.Is(err, ErrClosed) {
		t.Errorf("Subgroup of a closed subgroup: %v, want ErrClosed", err)
	}
}

// TestSplit: color r%2 and key -r give the subgroups [2 0] and [3 1].
func TestSplit(t *testing.T) {
	gs := newGroups(t, 4, TransportAuto, nil)
	subs := make([]*Group, 4)
	mustAll(t, "split", onAll(gs, func(g *Group) error {
		var err error
		subs[g.Rank()], err = g.Split(g.Rank()%2, -g.Rank())
		return err
	}))
	for r, sub := range subs {
		want := [][]int{{2, 0}, {3, 1}}[r%2]
		if got := sub.Members(); !slices.Equal(got, want) || sub.Rank() != slices.Index(want, r) {
			t.Errorf("rank %d: Split gave members %v, rank %d; want %v, rank %d", r, got, sub.Rank(), want, slices.Index(want, r))
		}
	}
	checkCollectives[float32](t, []*Group{subs[2], subs[0]})
	// a negative color joins no subgroup
	out := make([]*Group, 4)
	mustAll(t, "split", onAll(gs, func(g *Group) error {
		color := 0
		if g.Rank() == 3 {
			color = -1
		}
		var err error
		out[g.Rank()], err = g.Split(color, 0)
		return err
	}))
	if out[3] != nil || out[0].Size() != 3 {
		t.Errorf("Split with color -1 on rank 3: got %v; rank 0's subgroup has %d ranks, want 3", out[3], out[0].Size())
	}
}

// TestSubgroupAbort: a rank of one subgroup dies; the ranks of the other,
// disjoint subgroup, which never talk to it, must still fail fast with an
// error naming it (the abort goes through the store to every group of the
// job).
func TestSubgroupAbort(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			const victim = 3
			gs := newGroups(t, 4, tr.tr, func(o *Options) { o.Timeout = time.Minute })
			pairs := [][]*Group{subgroup(t, gs, []int{0, 1}), subgroup(t, gs, []int{2, 3})}
			start := time.Now()
			errs := onAll(gs, func(g *Group) error {
				r := g.Rank()
				sub := pairs[r/2][r%2]
				x := make([]float32, 10000)
				for it := 0; it < 100000 && time.Since(start) < 30*time.Second; it++ {
					if r == victim && it == 20 {
						g.kill()
						return nil
					}
					if err := AllReduce(sub, x, Sum); err != nil {
						return err
					}
				}
				return errors.New("no error after 100000 all-reduces or 30s")
			})
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("ranks took %v to notice the loss (timeout is 1m)", d)
			}
			for r, err := range errs {
				if r == victim {
					continue
				}
				var pe *PeerLostError
				if !errors.As(err, &pe) || pe.Rank != victim {
					t.Errorf("rank %d: error %v does not name lost rank %d", r, err, victim)
				}
				if !strings.Contains(fmt.Sprint(err), "of subgroup [") {
					t.Errorf("rank %d: error %v does not say which subgroup's operation failed", r, err)
				}
			}
			// later operations fail at once, on the subgroups and the group
			if err := Barrier(pairs[0][0]); !errors.Is(err, ErrPeerLost) {
				t.Errorf("barrier after the abort: %v, want ErrPeerLost", err)
			}
			if _, err := gs[0].Subgroup([]int{0}); !errors.Is(err, ErrPeerLost) {
				t.Errorf("Subgroup after the abort: %v, want ErrPeerLost", err)
			}
		})
	}
}
