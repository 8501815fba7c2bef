package data

import (
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// seqTable returns a table of n rows whose features are (i, 10i, 100i) and
// whose label is i mod 3, so every value tells which row it came from.
func seqTable(n int) *Table {
	t := &Table{Rows: n, Cols: 3, X: make([]float32, 3*n), Labels: make([]int64, n), Classes: []string{"a", "b", "c"}}
	for i := range n {
		t.X[3*i], t.X[3*i+1], t.X[3*i+2] = float32(i), float32(10*i), float32(100*i)
		t.Labels[i] = int64(i % 3)
	}
	return t
}

func mustDataset(t *testing.T, tab *Table, opts DatasetOptions) *Dataset {
	t.Helper()
	ds, err := NewDataset(tab, opts)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func TestDatasetGet(t *testing.T) {
	ds := mustDataset(t, seqTable(5), DatasetOptions{})
	if ds.Len() != 5 || !slices.Equal(ds.FeatureShape(), []int{3}) {
		t.Fatalf("Len %d shape %v", ds.Len(), ds.FeatureShape())
	}
	e := ds.Get(4)
	if got := e.X.Float32s(); !slices.Equal(got, []float32{4, 40, 400}) || e.Label != 1 {
		t.Fatalf("Get(4) = %v label %d", got, e.Label)
	}
	reg := &Table{Rows: 2, Cols: 2, X: []float32{1, 2, 3, 4}, Y: []float32{0.5, -1}}
	e = mustDataset(t, reg, DatasetOptions{Shape: []int{1, 2}}).Get(1)
	if e.Label != -1 || e.Target != -1 || !slices.Equal(e.X.Shape(), []int{1, 2}) {
		t.Fatalf("regression Get(1) = %+v shape %v", e, e.X.Shape())
	}
}

func TestDatasetErrors(t *testing.T) {
	for _, test := range []struct {
		name string
		tab  *Table
		opts DatasetOptions
		want string
	}{
		{"nil", nil, DatasetOptions{}, "nil table"},
		{"shape product", seqTable(2), DatasetOptions{Shape: []int{2, 2}}, "holds 4 values, but the table has 3"},
		{"zero dim", seqTable(2), DatasetOptions{Shape: []int{0, 3}}, "non-positive"},
		{"invalid table", &Table{Rows: 2, Cols: 2, X: []float32{1}}, DatasetOptions{}, "X has 1 values"},
	} {
		_, err := NewDataset(test.tab, test.opts)
		if err == nil || !strings.Contains(err.Error(), test.want) {
			t.Errorf("%s: error %v, want it to contain %q", test.name, err, test.want)
		}
	}
}

func TestGatherShapes(t *testing.T) {
	tab := &Table{Rows: 3, Cols: 4, X: make([]float32, 12), Y: []float32{1, 2, 3}}
	for i := range tab.X {
		tab.X[i] = float32(i)
	}
	ds := mustDataset(t, tab, DatasetOptions{Shape: []int{1, 2, 2}})
	b := ds.Batch([]int{2, 0})
	if !slices.Equal(b.X.Shape(), []int{2, 1, 2, 2}) || b.Labels != nil || !slices.Equal(b.Targets.Shape(), []int{2, 1}) {
		t.Fatalf("shapes X %v targets %v labels %v", b.X.Shape(), b.Targets.Shape(), b.Labels)
	}
	if got := b.X.Float32s(); !slices.Equal(got, []float32{8, 9, 10, 11, 0, 1, 2, 3}) {
		t.Fatalf("X = %v", got)
	}
	if got := b.Targets.Float32s(); !slices.Equal(got, []float32{3, 1}) {
		t.Fatalf("targets = %v", got)
	}
}

// collect runs one epoch and returns, per batch, the rows it held
// (checked against the batch contents) and the batch sizes.
func collect(t *testing.T, l *Loader, epoch, start int) (rows [][]int) {
	t.Helper()
	next := start
	for k, b := range l.EpochFrom(epoch, start) {
		if k != next {
			t.Fatalf("step %d, want %d", k, next)
		}
		next++
		x, lab := b.X.Float32s(), b.Labels.Int64s()
		if b.X.Size(0) != b.Size || len(b.Rows) != b.Size || len(lab) != b.Size {
			t.Fatalf("batch %d: size %d, X %v, %d rows, %d labels", k, b.Size, b.X.Shape(), len(b.Rows), len(lab))
		}
		for j, r := range b.Rows {
			if x[3*j] != float32(r) || x[3*j+2] != float32(100*r) || lab[j] != int64(r%3) {
				t.Fatalf("batch %d row %d: features %v label %d do not belong to row %d", k, j, x[3*j:3*j+3], lab[j], r)
			}
		}
		rows = append(rows, slices.Clone(b.Rows))
	}
	return rows
}

func TestLoaderEpochs(t *testing.T) {
	ds := mustDataset(t, seqTable(10), DatasetOptions{})
	for _, test := range []struct {
		name  string
		opts  LoaderOptions
		sizes []int
	}{
		{"sequential", LoaderOptions{BatchSize: 4, Prefetch: -1}, []int{4, 4, 2}},
		{"prefetch", LoaderOptions{BatchSize: 4}, []int{4, 4, 2}},
		{"drop last", LoaderOptions{BatchSize: 4, DropLast: true, Shuffle: true, Seed: 3}, []int{4, 4}},
		{"exact", LoaderOptions{BatchSize: 5, Shuffle: true, Prefetch: 1}, []int{5, 5}},
		{"one big batch", LoaderOptions{BatchSize: 64, Shuffle: true}, []int{10}},
	} {
		t.Run(test.name, func(t *testing.T) {
			l, err := NewLoader(ds, test.opts)
			if err != nil {
				t.Fatal(err)
			}
			if l.Len() != len(test.sizes) {
				t.Fatalf("Len = %d, want %d", l.Len(), len(test.sizes))
			}
			rows := collect(t, l, 0, 0)
			var all []int
			for i, r := range rows {
				if len(r) != test.sizes[i] {
					t.Fatalf("batch %d has %d rows, want %d", i, len(r), test.sizes[i])
				}
				all = append(all, r...)
			}
			if l.Samples() != len(all) {
				t.Fatalf("Samples() = %d, epoch had %d", l.Samples(), len(all))
			}
			slices.Sort(all)
			if len(slices.Compact(all)) != len(all) {
				t.Fatalf("a row repeats within the epoch: %v", rows)
			}
			if !test.opts.Shuffle && !slices.Equal(all, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
				t.Fatalf("rows %v", all)
			}
		})
	}
}

func TestLoaderShuffleReproducible(t *testing.T) {
	ds := mustDataset(t, seqTable(50), DatasetOptions{})
	mk := func(seed uint64, prefetch int) *Loader {
		l, err := NewLoader(ds, LoaderOptions{BatchSize: 8, Shuffle: true, Seed: seed, Prefetch: prefetch})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	a, b, c := mk(7, 2), mk(7, -1), mk(8, 2)
	e0, e1 := collect(t, a, 0, 0), collect(t, a, 1, 0)
	if !slices.EqualFunc(e0, collect(t, b, 0, 0), slices.Equal) {
		t.Fatal("same seed and epoch, prefetching or not: different batches")
	}
	if slices.EqualFunc(e0, e1, slices.Equal) {
		t.Fatal("epochs 0 and 1 have the same order")
	}
	if slices.EqualFunc(e0, collect(t, c, 0, 0), slices.Equal) {
		t.Fatal("seeds 7 and 8 give the same order")
	}
	if !slices.EqualFunc(e1, collect(t, a, 1, 0), slices.Equal) {
		t.Fatal("epoch 1 twice: different orders")
	}
	// Resuming mid-epoch yields the tail of the same epoch.
	if tail := collect(t, a, 1, 3); !slices.EqualFunc(tail, e1[3:], slices.Equal) {
		t.Fatalf("EpochFrom(1, 3) = %v, want %v", tail, e1[3:])
	}
	if n := len(collect(t, a, 1, 100)); n != 0 {
		t.Fatalf("start past the end yields %d batches", n)
	}
}

func TestLoaderBadOptions(t *testing.T) {
	ds := mustDataset(t, seqTable(3), DatasetOptions{})
	if _, err := NewLoader(ds, LoaderOptions{}); err == nil || !strings.Contains(err.Error(), "batch size") {
		t.Fatalf("batch size 0: %v", err)
	}
	if _, err := NewLoader(nil, LoaderOptions{BatchSize: 1}); err == nil {
		t.Fatal("nil dataset accepted")
	}
}

// waitGoroutines waits (bounded) for the goroutine count to fall to want.
func waitGoroutines(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > want {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines, want %d: the producer leaked", runtime.NumGoroutine(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

// producers counts the goroutines running a Loader's prefetch producer.
func producers() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "data.(*Loader).prefetch.func")
		}
		buf = make([]byte, 2*len(buf))
	}
}

func TestLoaderEarlyExitJoinsProducer(t *testing.T) {
	ds := mustDataset(t, seqTable(1000), DatasetOptions{})
	l, err := NewLoader(ds, LoaderOptions{BatchSize: 3, Shuffle: true, Prefetch: 4})
	if err != nil {
		t.Fatal(err)
	}
	epochs := func(n int) {
		for range n {
			for k := range l.Epoch(0) {
				if k == 5 {
					break
				}
			}
		}
	}
	// One round first: batch assembly may start the CPU worker pool's
	// helpers (internal/parallel), which live on and must not count.
	epochs(1)
	base := runtime.NumGoroutine()
	// The range statement returns only after the producer has exited:
	// after each early exit no goroutine is left in it (counted by stack,
	// so that goroutines of the runtime or the worker pool coming and
	// going meanwhile do not count).
	for k := range l.Epoch(0) {
		// The count sees a running producer.
		if n := producers(); n != 1 {
			t.Fatalf("%d producer goroutines during an epoch, want 1", n)
		}
		if k == 0 {
			break
		}
	}
	for range 20 {
		epochs(1)
		if n := producers(); n > 0 {
			t.Fatalf("%d producer goroutines after breaking out", n)
		}
	}
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Fatalf("recovered %v", r)
			}
		}()
		for k := range l.Epoch(1) {
			if k == 2 {
				panic("boom")
			}
		}
	}()
	waitGoroutines(t, base)
	// Buffers went back to the idle list and are reused, not multiplied.
	if len(l.idle) > l.opts.Prefetch+2 {
		t.Fatalf("idle list holds %d buffers, want at most %d", len(l.idle), l.opts.Prefetch+2)
	}
	if rows := collect(t, l, 2, 0); len(rows) != l.Len() {
		t.Fatalf("after early exits an epoch has %d batches, want %d", len(rows), l.Len())
	}
}

// TestLoaderConcurrentEpochs runs two epochs of one loader at once (for
// the race detector) and checks both.
func TestLoaderConcurrentEpochs(t *testing.T) {
	ds := mustDataset(t, seqTable(300), DatasetOptions{})
	l, err := NewLoader(ds, LoaderOptions{BatchSize: 7, Shuffle: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := [][][]int{collect(t, l, 0, 0), collect(t, l, 1, 0)}
	got := make([][][]int, 2)
	done := make(chan struct{})
	for e := range 2 {
		go func() {
			defer func() { done <- struct{}{} }()
			for _, b := range l.Epoch(e) {
				got[e] = append(got[e], slices.Clone(b.Rows))
				if b.X.Float32s()[0] != float32(b.Rows[0]) {
					panic("batch contents do not match its rows")
				}
			}
		}()
	}
	<-done
	<-done
	for e := range 2 {
		if !slices.EqualFunc(got[e], want[e], slices.Equal) {
			t.Fatalf("epoch %d differs when run concurrently", e)
		}
	}
}

func TestGatherAllocatesNothing(t *testing.T) {
	ds := mustDataset(t, seqTable(200), DatasetOptions{})
	b := ds.NewBatch(16)
	rows := make([]int, 16)
	for i := range rows {
		rows[i] = 3 * i
	}
	ds.Gather(rows, b)
	if a := testing.AllocsPerRun(100, func() { ds.Gather(rows, b) }); a != 0 {
		t.Fatalf("Gather allocates %v times per call", a)
	}
}

func BenchmarkLoaderEpoch(b *testing.B) {
	tab := &Table{Rows: 60000, Cols: 784, X: make([]float32, 60000*784), Labels: make([]int64, 60000), Classes: make([]string, 10)}
	ds, err := NewDataset(tab, DatasetOptions{Shape: []int{1, 28, 28}})
	if err != nil {
		b.Fatal(err)
	}
	for _, pf := range []int{-1, 2} {
		name := "prefetch"
		if pf < 0 {
			name = "sync"
		}
		b.Run(name, func(b *testing.B) {
			l, _ := NewLoader(ds, LoaderOptions{BatchSize: 64, Shuffle: true, Prefetch: pf})
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				for range l.Epoch(i) {
				}
			}
			b.ReportMetric(float64(b.N*tab.Rows)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}
