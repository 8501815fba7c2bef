package data

import (
	"slices"
	"strings"
	"testing"
)

func TestSequentialAndRandomSampler(t *testing.T) {
	if got := (SequentialSampler{N: 4}).Indices(7); !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Fatalf("sequential %v", got)
	}
	r := RandomSampler{N: 50, Seed: 3}
	a, b := r.Indices(0), r.Indices(1)
	if !slices.Equal(a, r.Indices(0)) {
		t.Fatal("RandomSampler is not deterministic")
	}
	if slices.Equal(a, b) {
		t.Fatal("two epochs share an order")
	}
	if s := slices.Sorted(slices.Values(a)); !slices.Equal(s, SequentialSampler{N: 50}.Indices(0)) {
		t.Fatalf("not a permutation: %v", a)
	}
	if r.Len() != 50 || (SequentialSampler{N: -1}).Len() != 0 {
		t.Fatal("Len")
	}
}

// TestRandomSamplerIsLoaderShuffle pins that a RandomSampler reproduces the
// Loader's Shuffle order and batches bit for bit, so training results do not
// change when a trainer moves to samplers.
func TestRandomSamplerIsLoaderShuffle(t *testing.T) {
	ds := mustDataset(t, seqTable(23), DatasetOptions{})
	for _, dropLast := range []bool{false, true} {
		old, err := NewLoader(ds, LoaderOptions{BatchSize: 5, Shuffle: true, Seed: 42, DropLast: dropLast})
		if err != nil {
			t.Fatal(err)
		}
		viaSampler, err := NewLoader(ds, LoaderOptions{BatchSize: 5, DropLast: dropLast, Sampler: RandomSampler{N: 23, Seed: 42}})
		if err != nil {
			t.Fatal(err)
		}
		if old.Len() != viaSampler.Len() || old.Samples() != viaSampler.Samples() {
			t.Fatalf("Len %d/%d Samples %d/%d", old.Len(), viaSampler.Len(), old.Samples(), viaSampler.Samples())
		}
		for epoch := range 3 {
			if !slices.Equal(old.Order(epoch), viaSampler.Order(epoch)) {
				t.Fatalf("epoch %d: orders differ", epoch)
			}
			want, got := collect(t, old, epoch, 0), collect(t, viaSampler, epoch, 0)
			if !slices.EqualFunc(want, got, slices.Equal) {
				t.Fatalf("epoch %d: batches %v, want %v", epoch, got, want)
			}
		}
	}
}

// countRows counts how often each row appears in the ranks' indices.
func countRows(n int, ranks [][]int) []int {
	count := make([]int, n)
	for _, idx := range ranks {
		for _, i := range idx {
			count[i]++
		}
	}
	return count
}

func TestDistributedSampler(t *testing.T) {
	for _, test := range []struct {
		n, ranks int
		dropLast bool
		shuffle  bool
	}{
		{10, 1, false, true}, {10, 2, false, true}, {10, 3, false, true}, {10, 3, true, true},
		{10, 4, false, false}, {10, 4, true, false}, {2, 5, false, true}, {2, 5, true, true},
		{0, 3, false, true}, {97, 8, false, true}, {97, 8, true, true},
	} {
		for epoch := range 2 {
			global := epochOrder(test.n, test.shuffle, 9, epoch)
			var ranks [][]int
			for r := range test.ranks {
				s, err := NewDistributedSampler(test.n, DistributedOptions{Rank: r, Ranks: test.ranks, Shuffle: test.shuffle, Seed: 9, DropLast: test.dropLast})
				if err != nil {
					t.Fatal(err)
				}
				idx := s.Indices(epoch)
				if len(idx) != s.Len() {
					t.Fatalf("%+v rank %d: %d indices, Len %d", test, r, len(idx), s.Len())
				}
				if !slices.Equal(idx, s.Indices(epoch)) {
					t.Fatalf("%+v rank %d: not deterministic", test, r)
				}
				ranks = append(ranks, idx)
			}
			// Equal counts on every rank.
			for r := range ranks {
				if len(ranks[r]) != len(ranks[0]) {
					t.Fatalf("%+v: rank %d has %d indices, rank 0 %d", test, r, len(ranks[r]), len(ranks[0]))
				}
			}
			// Interleaved, the ranks' indices are the global order, padded
			// by wrapping around or cut at a multiple of Ranks.
			var union []int
			for p := range len(ranks[0]) {
				for r := range ranks {
					union = append(union, ranks[r][p])
				}
			}
			want := slices.Clone(global)
			if test.dropLast {
				want = want[:test.n/test.ranks*test.ranks]
			} else {
				for i := 0; len(want) < len(union); i++ {
					want = append(want, want[i])
				}
			}
			if !slices.Equal(union, want) {
				t.Fatalf("%+v epoch %d: union %v, want %v", test, epoch, union, want)
			}
			// Disjoint apart from the padding: every row is seen exactly
			// once, except the ⌈N/R⌉·R − N padded rows seen twice (or
			// more when N < R) and the dropped ones never.
			count := countRows(test.n, ranks)
			extra := 0
			for _, c := range count {
				if c == 0 && !test.dropLast {
					t.Fatalf("%+v: a row is never visited: %v", test, count)
				}
				if c > 1 {
					if test.dropLast {
						t.Fatalf("%+v: a row is visited twice: %v", test, count)
					}
					extra += c - 1
				}
			}
			if !test.dropLast && test.n > 0 && extra != len(union)-test.n {
				t.Fatalf("%+v: %d repeats, want %d", test, extra, len(union)-test.n)
			}
		}
	}
	// One rank is the RandomSampler.
	s, _ := NewDistributedSampler(31, DistributedOptions{Ranks: 1, Shuffle: true, Seed: 5})
	if !slices.Equal(s.Indices(2), RandomSampler{N: 31, Seed: 5}.Indices(2)) {
		t.Fatal("one rank differs from RandomSampler")
	}
}

func TestDistributedBatchSampler(t *testing.T) {
	for _, test := range []struct {
		n, batch, ranks int
		dropLast        bool
	}{
		{100, 8, 1, false}, {100, 8, 2, false}, {100, 8, 4, false}, {100, 8, 8, false},
		{100, 8, 4, true}, {3, 8, 4, false}, {96, 12, 3, false}, {0, 4, 2, false},
	} {
		single, err := NewDistributedBatchSampler(test.n, test.batch, DistributedOptions{Rank: 0, Ranks: 1, Shuffle: true, Seed: 7, DropLast: test.dropLast})
		if err != nil {
			t.Fatal(err)
		}
		for epoch := range 2 {
			want := single.Batches(epoch) // the global batches of one process
			var all [][][]int
			for r := range test.ranks {
				s, err := NewDistributedBatchSampler(test.n, test.batch, DistributedOptions{Rank: r, Ranks: test.ranks, Shuffle: true, Seed: 7, DropLast: test.dropLast})
				if err != nil {
					t.Fatal(err)
				}
				b := s.Batches(epoch)
				if len(b) != s.NumBatches() || len(b) != len(want) {
					t.Fatalf("%+v rank %d: %d batches, NumBatches %d, single process %d", test, r, len(b), s.NumBatches(), len(want))
				}
				if idx := s.Indices(epoch); len(idx) != s.Len() || !slices.Equal(idx, slices.Concat(b...)) {
					t.Fatalf("%+v rank %d: Indices disagree with Batches", test, r)
				}
				for _, bb := range b {
					if len(bb) > s.MaxBatch() {
						t.Fatalf("%+v rank %d: batch of %d > MaxBatch %d", test, r, len(bb), s.MaxBatch())
					}
				}
				all = append(all, b)
			}
			// Step k of the ranks, concatenated in rank order, is global
			// batch k: results cannot depend on the number of ranks.
			for k := range want {
				var step []int
				for r := range all {
					step = append(step, all[r][k]...)
				}
				if !slices.Equal(step, want[k]) {
					t.Fatalf("%+v epoch %d step %d: ranks hold %v, global batch %v", test, epoch, k, step, want[k])
				}
				for r := range all {
					if d := len(all[r][k]) - len(all[0][k]); d < -1 || d > 1 {
						t.Fatalf("%+v: step %d sizes differ by more than one", test, k)
					}
				}
			}
			// Disjoint, and the union is the single-process epoch.
			count := countRows(test.n, slices.Concat(all...))
			for i, c := range count {
				if c > 1 || (c == 0 && !test.dropLast) {
					t.Fatalf("%+v: row %d visited %d times", test, i, c)
				}
			}
		}
	}
}

func TestSamplerErrors(t *testing.T) {
	for _, test := range []struct {
		err  error
		want string
	}{
		{func() error { _, err := NewDistributedSampler(5, DistributedOptions{Ranks: 0}); return err }(), "Ranks must be at least 1"},
		{func() error { _, err := NewDistributedSampler(5, DistributedOptions{Rank: 2, Ranks: 2}); return err }(), "rank 2 is outside [0, 2)"},
		{func() error { _, err := NewDistributedSampler(-1, DistributedOptions{Ranks: 1}); return err }(), "negative dataset size"},
		{func() error { _, err := NewDistributedBatchSampler(5, 6, DistributedOptions{Ranks: 4}); return err }(), "global batch size (6) must be a positive multiple of the number of ranks (4)"},
		{func() error { _, err := NewDistributedBatchSampler(5, 0, DistributedOptions{Ranks: 1}); return err }(), "positive multiple"},
	} {
		if test.err == nil || !strings.Contains(test.err.Error(), test.want) {
			t.Errorf("got %v, want %q", test.err, test.want)
		}
	}
}

func TestLoaderWithSamplers(t *testing.T) {
	ds := mustDataset(t, seqTable(10), DatasetOptions{})
	// A DistributedSampler's indices are cut into BatchSize batches.
	s, _ := NewDistributedSampler(10, DistributedOptions{Rank: 1, Ranks: 3})
	l, err := NewLoader(ds, LoaderOptions{BatchSize: 2, Sampler: s, Prefetch: -1})
	if err != nil {
		t.Fatal(err)
	}
	// Global order 0..9 padded with 0, 1; rank 1 takes 1, 4, 7, 0.
	if got := collect(t, l, 0, 0); !slices.EqualFunc(got, [][]int{{1, 4}, {7, 0}}, slices.Equal) || l.Len() != 2 || l.Samples() != 4 {
		t.Fatalf("batches %v Len %d Samples %d", got, l.Len(), l.Samples())
	}
	// A DistributedBatchSampler's batches are yielded as they are, the
	// empty tail batch of a rank included, so every rank takes the same
	// number of steps.
	ds9 := mustDataset(t, seqTable(9), DatasetOptions{})
	for r, want := range [][][]int{{{0, 1}, {4, 5}, {}}, {{2, 3}, {6, 7}, {8}}} {
		bs, _ := NewDistributedBatchSampler(9, 4, DistributedOptions{Rank: r, Ranks: 2})
		for _, prefetch := range []int{-1, 0} {
			l, err := NewLoader(ds9, LoaderOptions{Sampler: bs, Prefetch: prefetch})
			if err != nil {
				t.Fatal(err)
			}
			if got := collect(t, l, 0, 0); !slices.EqualFunc(got, want, slices.Equal) || l.Len() != 3 || l.Options().BatchSize != 2 {
				t.Fatalf("rank %d: batches %v, want %v (Len %d)", r, got, want, l.Len())
			}
			if got := collect(t, l, 0, 1); !slices.EqualFunc(got, want[1:], slices.Equal) {
				t.Fatalf("rank %d: resumed batches %v", r, got)
			}
		}
	}
	bs, _ := NewDistributedBatchSampler(10, 4, DistributedOptions{Ranks: 2})
	for _, test := range []struct {
		opts LoaderOptions
		want string
	}{
		{LoaderOptions{BatchSize: 1, Sampler: bs}, "smaller than the sampler's batches (2)"},
		{LoaderOptions{Sampler: bs, DropLast: true}, "set it on the sampler"},
		{LoaderOptions{BatchSize: 2, Sampler: SequentialSampler{N: 10}, Shuffle: true}, "the sampler's job"},
		{LoaderOptions{Sampler: SequentialSampler{N: 10}}, "batch size must be at least 1"},
		{LoaderOptions{BatchSize: 2, Sampler: RandomSampler{N: 11}}, "the sampler draws from 11 rows, the dataset has 10"},
	} {
		if _, err := NewLoader(ds, test.opts); err == nil || !strings.Contains(err.Error(), test.want) {
			t.Errorf("%+v: got %v, want %q", test.opts, err, test.want)
		}
	}
}
