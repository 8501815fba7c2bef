package comm

import (
	"fmt"
	"math"
	"testing"
)

// The conformance suite: every collective, and every all-reduce algorithm
// through the same checks, against a sequential reference, for world sizes
// 1-8 and awkward lengths, over TCP and shared memory. Inputs are small
// integers so that every reduction order gives exactly the same floats.

var awkwardLens = []int{0, 1, 2, 3, 5, 7, 8, 13, 64, 1000, 4099}

func input[T Number](rank, i int, op ReduceOp) T {
	if op == Prod {
		return T([]int{1, -1, 2, 1, 1}[(rank*3+i)%5])
	}
	return T((rank*7+i*3)%11 - 5)
}

func reference[T Number](size, n int, op ReduceOp) []T {
	out := make([]T, n)
	for i := range out {
		acc := input[T](0, i, op)
		for r := 1; r < size; r++ {
			v := input[T](r, i, op)
			switch op {
			case Sum, Avg:
				acc += v
			case Prod:
				acc *= v
			case Max:
				acc = max(acc, v)
			case Min:
				acc = min(acc, v)
			}
		}
		if op == Avg {
			acc /= T(size)
		}
		out[i] = acc
	}
	return out
}

func equal[T Number](a, b []T) (int, bool) {
	if len(a) != len(b) {
		return -1, false
	}
	for i := range a {
		if a[i] != b[i] && !(a[i] != a[i] && b[i] != b[i]) {
			return i, false
		}
	}
	return 0, true
}

var transports = []struct {
	name string
	tr   Transport
}{{"tcp", TransportTCP}, {"shm", TransportSHM}}

var algos = []Algorithm{AlgoRing, AlgoRecursiveDoubling, AlgoNaive, AlgoAuto}

func TestConformance(t *testing.T) {
	maxN := 8
	if testing.Short() {
		maxN = 5
	}
	for _, tr := range transports {
		for n := 1; n <= maxN; n++ {
			t.Run(fmt.Sprintf("%s/n=%d", tr.name, n), func(t *testing.T) {
				gs := newGroups(t, n, tr.tr, nil)
				for _, algo := range algos {
					checkAllReduce[float32](t, gs, algo)
					checkAllReduce[float64](t, gs, algo)
					checkAllReduce[int64](t, gs, algo)
				}
				checkCollectives[float32](t, gs)
				checkCollectives[int64](t, gs)
				checkCollectives[float64](t, gs)
			})
		}
	}
}

func checkAllReduce[T Number](t *testing.T, gs []*Group, algo Algorithm) {
	t.Helper()
	size := len(gs)
	for _, op := range []ReduceOp{Sum, Avg, Max, Min, Prod} {
		lens := awkwardLens
		if op != Sum {
			lens = []int{0, 1, 7, 1000}
		}
		for _, n := range lens {
			want := reference[T](size, n, op)
			bufs := make([][]T, size)
			errs := onAll(gs, func(g *Group) error {
				x := make([]T, n)
				for i := range x {
					x[i] = input[T](g.Rank(), i, op)
				}
				bufs[g.Rank()] = x
				return AllReduceWith(g, x, op, algo)
			})
			mustAll(t, fmt.Sprintf("allreduce %v %v %T n=%d", algo, op, want, n), errs)
			for r, got := range bufs {
				if i, ok := equal(got, want); !ok {
					t.Fatalf("allreduce %v %v %T size %d len %d: rank %d element %d = %v, want %v",
						algo, op, want, size, n, r, i, got[i], want[i])
				}
			}
		}
	}
}

func checkCollectives[T Number](t *testing.T, gs []*Group) {
	t.Helper()
	size := len(gs)
	val := func(r, i int) T { return T(r*1000 + i) }
	for _, m := range []int{0, 1, 3, 1000} {
		// broadcast from every root
		for root := 0; root < size; root++ {
			bufs := make([][]T, size)
			mustAll(t, "broadcast", onAll(gs, func(g *Group) error {
				x := make([]T, m)
				if g.Rank() == root {
					for i := range x {
						x[i] = val(root, i)
					}
				}
				bufs[g.Rank()] = x
				return Broadcast(g, x, root)
			}))
			for r := range bufs {
				for i, v := range bufs[r] {
					if v != val(root, i) {
						t.Fatalf("broadcast size %d root %d len %d: rank %d[%d] = %v", size, root, m, r, i, v)
					}
				}
			}
		}
		// all-gather
		outs := make([][]T, size)
		mustAll(t, "allgather", onAll(gs, func(g *Group) error {
			in := make([]T, m)
			for i := range in {
				in[i] = val(g.Rank(), i)
			}
			outs[g.Rank()] = make([]T, size*m)
			return AllGather(g, outs[g.Rank()], in)
		}))
		for r := range outs {
			for q := 0; q < size; q++ {
				for i := 0; i < m; i++ {
					if got := outs[r][q*m+i]; got != val(q, i) {
						t.Fatalf("allgather size %d len %d: rank %d block %d[%d] = %v", size, m, r, q, i, got)
					}
				}
			}
		}
		// reduce-scatter (sum and max)
		for _, op := range []ReduceOp{Sum, Max, Avg} {
			full := reference[T](size, size*m, op)
			outs := make([][]T, size)
			mustAll(t, "reducescatter", onAll(gs, func(g *Group) error {
				in := make([]T, size*m)
				for i := range in {
					in[i] = input[T](g.Rank(), i, op)
				}
				outs[g.Rank()] = make([]T, m)
				return ReduceScatter(g, outs[g.Rank()], in, op)
			}))
			for r := range outs {
				if i, ok := equal(outs[r], full[r*m:(r+1)*m]); !ok {
					t.Fatalf("reducescatter %v size %d len %d: rank %d element %d = %v, want %v", op, size, m, r, i, outs[r][i], full[r*m+i])
				}
			}
		}
		// gather and scatter with every root
		for root := 0; root < size; root++ {
			var gathered []T
			mustAll(t, "gather", onAll(gs, func(g *Group) error {
				in := make([]T, m)
				for i := range in {
					in[i] = val(g.Rank(), i)
				}
				var out []T
				if g.Rank() == root {
					out = make([]T, size*m)
					gathered = out
				}
				return Gather(g, out, in, root)
			}))
			for q := 0; q < size; q++ {
				for i := 0; i < m; i++ {
					if gathered[q*m+i] != val(q, i) {
						t.Fatalf("gather size %d root %d: block %d[%d] = %v", size, root, q, i, gathered[q*m+i])
					}
				}
			}
			outs := make([][]T, size)
			mustAll(t, "scatter", onAll(gs, func(g *Group) error {
				var in []T
				if g.Rank() == root {
					in = make([]T, size*m)
					for q := 0; q < size; q++ {
						for i := 0; i < m; i++ {
							in[q*m+i] = val(q, i)
						}
					}
				}
				outs[g.Rank()] = make([]T, m)
				return Scatter(g, outs[g.Rank()], in, root)
			}))
			for r := range outs {
				for i, v := range outs[r] {
					if v != val(r, i) {
						t.Fatalf("scatter size %d root %d: rank %d[%d] = %v", size, root, r, i, v)
					}
				}
			}
		}
	}
	mustAll(t, "barrier", onAll(gs, Barrier))
	if size < 2 {
		return
	}
	// point to point around the ring, with two tags received in the
	// opposite order of sending (the first is buffered)
	outs := make([][2][]T, size)
	mustAll(t, "send/recv", onAll(gs, func(g *Group) error {
		r := g.Rank()
		next, prev := (r+1)%size, (r+size-1)%size
		a := []T{val(r, 1), val(r, 2)}
		b := []T{val(r, 3)}
		w1 := SendAsync(g, a, next, 1)
		w2 := SendAsync(g, b, next, 2)
		gotB, gotA := make([]T, 1), make([]T, 2)
		if err := Recv(g, gotB, prev, 2); err != nil {
			return err
		}
		if err := Recv(g, gotA, prev, 1); err != nil {
			return err
		}
		outs[r] = [2][]T{gotA, gotB}
		if err := w1.Wait(); err != nil {
			return err
		}
		return w2.Wait()
	}))
	for r := range outs {
		prev := (r + size - 1) % size
		if outs[r][0][0] != val(prev, 1) || outs[r][0][1] != val(prev, 2) || outs[r][1][0] != val(prev, 3) {
			t.Fatalf("send/recv size %d: rank %d got %v", size, r, outs[r])
		}
	}
}

// TestAsyncOverlap queues several all-reduces (as DDP buckets do) and waits
// for them afterwards.
func TestAsyncOverlap(t *testing.T) {
	gs := newGroups(t, 3, TransportAuto, nil)
	const buckets = 6
	results := make([][][]float32, 3)
	mustAll(t, "async", onAll(gs, func(g *Group) error {
		var works []*Work
		for b := 0; b < buckets; b++ {
			x := make([]float32, 100*(b+1))
			for i := range x {
				x[i] = float32(g.Rank() + b)
			}
			results[g.Rank()] = append(results[g.Rank()], x)
			works = append(works, AllReduceAsync(g, x, Sum))
		}
		for _, w := range works {
			if err := w.Wait(); err != nil {
				return err
			}
		}
		return nil
	}))
	for r := range results {
		for b, x := range results[r] {
			want := float32(0+1+2) + float32(3*b)
			for i, v := range x {
				if v != want {
					t.Fatalf("rank %d bucket %d [%d] = %v, want %v", r, b, i, v, want)
				}
			}
		}
	}
}

func TestNaNPropagates(t *testing.T) {
	gs := newGroups(t, 3, TransportTCP, nil)
	for _, algo := range []Algorithm{AlgoRing, AlgoRecursiveDoubling} {
		bufs := make([][]float64, 3)
		mustAll(t, "max", onAll(gs, func(g *Group) error {
			x := []float64{float64(g.Rank()), 1, 2, 3}
			if g.Rank() == 1 {
				x[0] = math.NaN()
			}
			bufs[g.Rank()] = x
			return AllReduceWith(g, x, Max, algo)
		}))
		for r := range bufs {
			if !math.IsNaN(bufs[r][0]) || bufs[r][3] != 3 {
				t.Fatalf("%v: rank %d got %v", algo, r, bufs[r])
			}
		}
	}
}
