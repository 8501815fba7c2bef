package sched

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

func TestChunk(t *testing.T) {
	for _, test := range []struct {
		n, p int
		want [][2]int
	}{
		{0, 3, [][2]int{{0, 0}, {0, 0}, {0, 0}}},
		{1, 3, [][2]int{{0, 1}, {1, 1}, {1, 1}}},
		{7, 3, [][2]int{{0, 3}, {3, 5}, {5, 7}}},
		{9, 3, [][2]int{{0, 3}, {3, 6}, {6, 9}}},
		{5, 1, [][2]int{{0, 5}}},
	} {
		for c := 0; c < test.p; c++ {
			s, e := Chunk(test.n, test.p, c)
			if [2]int{s, e} != test.want[c] {
				t.Errorf("Chunk(%d,%d,%d) = [%d,%d), want %v", test.n, test.p, c, s, e, test.want[c])
			}
		}
	}
}

// set is a bitmask of contributing ranks.
type set uint64

// TestRingAllReduce simulates the ring schedule symbolically: every rank
// starts with its own contribution in every chunk; a received chunk is merged
// (reduce-scatter) or replaced (all-gather). At the end every rank must hold
// every chunk with every contribution exactly once.
func TestRingAllReduce(t *testing.T) {
	for size := 1; size <= 12; size++ {
		state := make([][]set, size) // state[rank][chunk]
		for r := range state {
			state[r] = make([]set, size)
			for c := range state[r] {
				state[r][c] = 1 << r
			}
		}
		rs := make([][]Step, size)
		ag := make([][]Step, size)
		for r := 0; r < size; r++ {
			rs[r], ag[r] = RingReduceScatter(r, size), RingAllGather(r, size)
			if len(rs[r]) != size-1 || len(ag[r]) != size-1 {
				t.Fatalf("size %d rank %d: %d and %d steps, want %d", size, r, len(rs[r]), len(ag[r]), size-1)
			}
		}
		for s := 0; s < size-1; s++ {
			next := clone(state)
			for r := 0; r < size; r++ {
				to := Next(r, size)
				st, rt := rs[r][s], rs[to][s]
				if st.Send != rt.Recv {
					t.Fatalf("size %d step %d: rank %d sends chunk %d, rank %d expects %d", size, s, r, st.Send, to, rt.Recv)
				}
				if next[to][rt.Recv]&state[r][st.Send] != 0 {
					t.Fatalf("size %d step %d: contribution counted twice in chunk %d on rank %d", size, s, rt.Recv, to)
				}
				next[to][rt.Recv] |= state[r][st.Send]
			}
			state = next
		}
		all := set(1<<size - 1)
		for r := 0; r < size; r++ {
			if state[r][r] != all {
				t.Fatalf("size %d: after reduce-scatter rank %d chunk %d = %b, want %b", size, r, r, state[r][r], all)
			}
		}
		for s := 0; s < size-1; s++ {
			next := clone(state)
			for r := 0; r < size; r++ {
				to := Next(r, size)
				st, rt := ag[r][s], ag[to][s]
				if st.Send != rt.Recv {
					t.Fatalf("all-gather size %d step %d: rank %d sends %d, rank %d expects %d", size, s, r, st.Send, to, rt.Recv)
				}
				if state[r][st.Send] != all {
					t.Fatalf("all-gather size %d step %d: rank %d forwards incomplete chunk %d", size, s, r, st.Send)
				}
				next[to][rt.Recv] = state[r][st.Send]
			}
			state = next
		}
		for r := 0; r < size; r++ {
			for c := 0; c < size; c++ {
				if state[r][c] != all {
					t.Fatalf("size %d: rank %d chunk %d = %b at the end", size, r, c, state[r][c])
				}
			}
		}
	}
}

func clone(s [][]set) [][]set {
	out := make([][]set, len(s))
	for i := range s {
		out[i] = append([]set(nil), s[i]...)
	}
	return out
}

// TestRecursiveDoubling executes every rank's plan phase by phase and checks
// that the sends and receives pair up and every rank ends with everything.
func TestRecursiveDoubling(t *testing.T) {
	for size := 1; size <= 17; size++ {
		plans := make([]RDPlan, size)
		state := make([]set, size)
		for r := range plans {
			plans[r] = RecursiveDoubling(r, size)
			state[r] = 1 << r
		}
		// fold in
		for r, p := range plans {
			if p.FoldSendTo >= 0 {
				if plans[p.FoldSendTo].FoldRecvFrom != r {
					t.Fatalf("size %d: rank %d folds into %d which does not expect it", size, r, p.FoldSendTo)
				}
				state[p.FoldSendTo] |= state[r]
			}
		}
		rounds := -1
		for r, p := range plans {
			if p.FoldSendTo >= 0 {
				if len(p.Partners) != 0 {
					t.Fatalf("size %d: folded rank %d takes part in rounds", size, r)
				}
				continue
			}
			if rounds >= 0 && len(p.Partners) != rounds {
				t.Fatalf("size %d: rank %d has %d rounds, others %d", size, r, len(p.Partners), rounds)
			}
			rounds = len(p.Partners)
		}
		for k := 0; k < rounds; k++ {
			next := append([]set(nil), state...)
			for r, p := range plans {
				if p.FoldSendTo >= 0 {
					continue
				}
				q := p.Partners[k]
				if plans[q].Partners[k] != r {
					t.Fatalf("size %d round %d: rank %d pairs with %d, which pairs with %d", size, k, r, q, plans[q].Partners[k])
				}
				if state[r]&state[q] != 0 {
					t.Fatalf("size %d round %d: ranks %d and %d overlap", size, k, r, q)
				}
				next[r] = state[r] | state[q]
			}
			state = next
		}
		for r, p := range plans {
			if p.UnfoldSendTo >= 0 {
				if plans[p.UnfoldSendTo].UnfoldRecvFrom != r {
					t.Fatalf("size %d: unfold mismatch at rank %d", size, r)
				}
				state[p.UnfoldSendTo] = state[r]
			}
		}
		for r := range state {
			if state[r] != set(1<<size-1) {
				t.Fatalf("size %d: rank %d ends with %b", size, r, state[r])
			}
		}
	}
}

func TestBinomial(t *testing.T) {
	for size := 1; size <= 13; size++ {
		for root := 0; root < size; root++ {
			has := make([]bool, size)
			has[root] = true
			parents := make([]int, size)
			kids := make([][]int, size)
			for r := 0; r < size; r++ {
				parents[r], kids[r] = Binomial(r, size, root)
				if (parents[r] < 0) != (r == root) {
					t.Fatalf("size %d root %d: rank %d parent %d", size, root, r, parents[r])
				}
			}
			// deliver breadth-first from the root; each rank receives once from its parent
			queue := []int{root}
			for steps := 0; len(queue) > 0 && steps < size*size; steps++ {
				r := queue[0]
				queue = queue[1:]
				for _, c := range kids[r] {
					if parents[c] != r || has[c] {
						t.Fatalf("size %d root %d: bad edge %d->%d", size, root, r, c)
					}
					has[c] = true
					queue = append(queue, c)
				}
			}
			for r, h := range has {
				if !h {
					t.Fatalf("size %d root %d: rank %d never reached", size, root, r)
				}
			}
		}
	}
}

func TestDissemination(t *testing.T) {
	for size := 1; size <= 13; size++ {
		know := make([]set, size)
		for r := range know {
			know[r] = 1 << r
		}
		to0, _ := Dissemination(0, size)
		for k := range to0 {
			next := append([]set(nil), know...)
			for r := 0; r < size; r++ {
				to, _ := Dissemination(r, size)
				_, from := Dissemination(to[k], size)
				if from[k] != r {
					t.Fatalf("size %d round %d: %d signals %d, which waits for %d", size, k, r, to[k], from[k])
				}
				next[to[k]] |= know[r]
			}
			know = next
		}
		for r := range know {
			if know[r] != set(1<<size-1) {
				t.Fatalf("size %d: rank %d knows %b", size, r, know[r])
			}
		}
	}
}

// TestGolden renders the schedules of a few sizes and compares them with
// testdata/schedules.txt, a reviewed picture of who sends what when
// (go test -run Golden -update rewrites it).
func TestGolden(t *testing.T) {
	var b strings.Builder
	for _, size := range []int{3, 4, 5, 6} {
		fmt.Fprintf(&b, "# size %d\n", size)
		for r := 0; r < size; r++ {
			fmt.Fprintf(&b, "rank %d ring reduce-scatter (send,recv):", r)
			for _, s := range RingReduceScatter(r, size) {
				fmt.Fprintf(&b, " (%d,%d)", s.Send, s.Recv)
			}
			fmt.Fprintf(&b, "  all-gather:")
			for _, s := range RingAllGather(r, size) {
				fmt.Fprintf(&b, " (%d,%d)", s.Send, s.Recv)
			}
			p := RecursiveDoubling(r, size)
			fmt.Fprintf(&b, "\nrank %d rd fold->%d fold<-%d partners %v unfold->%d unfold<-%d\n",
				r, p.FoldSendTo, p.FoldRecvFrom, p.Partners, p.UnfoldSendTo, p.UnfoldRecvFrom)
		}
	}
	path := filepath.Join("testdata", "schedules.txt")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != b.String() {
		t.Errorf("schedules differ from %s:\n%s", path, b.String())
	}
}
