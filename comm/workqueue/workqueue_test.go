package workqueue

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/comm/store"
)

func newServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := store.Serve(ln, []byte("tok"), slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { s.Close() })
	return s.Addr().String()
}

func dial(t *testing.T, ctx context.Context, addr string, rank int) store.Store {
	t.Helper()
	c, err := store.Dial(ctx, addr, []byte("tok"), rank)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// drain claims from each queue on its own goroutine until they are empty
// and returns the items each got.
func drain(t *testing.T, ctx context.Context, qs []Queue) [][]int {
	t.Helper()
	got := make([][]int, len(qs))
	errs := make([]error, len(qs))
	var wg sync.WaitGroup
	for w, q := range qs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 { // more than any test's items
				i, ok, err := q.Claim(ctx)
				if err != nil || !ok {
					errs[w] = err
					return
				}
				got[w] = append(got[w], i)
			}
		}()
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Fatalf("worker %d: %v", w, err)
		}
	}
	return got
}

// checkOnce fails unless the claims cover 0..n-1 exactly once.
func checkOnce(t *testing.T, got [][]int, n int) {
	t.Helper()
	var all []int
	for _, g := range got {
		all = append(all, g...)
	}
	slices.Sort(all)
	if len(all) != n {
		t.Fatalf("%d items handed out, want %d: %v", len(all), n, got)
	}
	for i, v := range all {
		if v != i {
			t.Fatalf("items handed out %v: want each of 0..%d once", all, n-1)
		}
	}
}

// queues returns k workers' queues of n items: k goroutines on one Local,
// or k clients of one Store.
func queues(t *testing.T, ctx context.Context, kind string, k, n int) []Queue {
	t.Helper()
	qs := make([]Queue, k)
	if kind == "local" {
		l := NewLocal(n)
		for w := range qs {
			qs[w] = l
		}
		return qs
	}
	addr := newServer(t)
	for w := range qs {
		qs[w] = NewStore(store.WithPrefix(dial(t, ctx, addr, w), "q/"), n)
	}
	return qs
}

func TestEachItemOnce(t *testing.T) {
	for _, kind := range []string{"local", "store"} {
		t.Run(kind, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			const n = 40
			qs := queues(t, ctx, kind, 4, n)
			checkOnce(t, drain(t, ctx, qs), n)
			if _, ok, err := qs[0].Claim(ctx); ok || err != nil {
				t.Fatalf("a claim after the end: ok %v, err %v", ok, err)
			}
		})
	}
}

func TestStopEndsEveryWorker(t *testing.T) {
	for _, kind := range []string{"local", "store"} {
		t.Run(kind, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			qs := queues(t, ctx, kind, 2, 10)
			if i, ok, err := qs[0].Claim(ctx); !ok || err != nil || i != 0 {
				t.Fatalf("first claim: %d %v %v", i, ok, err)
			}
			if err := qs[0].Stop(ctx); err != nil {
				t.Fatal(err)
			}
			for w, q := range qs {
				if i, ok, err := q.Claim(ctx); ok || err != nil {
					t.Fatalf("worker %d claimed %d after Stop (err %v)", w, i, err)
				}
			}
		})
	}
}

func TestCountersAndResults(t *testing.T) {
	for _, kind := range []string{"local", "store"} {
		t.Run(kind, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			qs := queues(t, ctx, kind, 2, 3)
			if v, err := qs[0].Add(ctx, "errors", 5); err != nil || v != 5 {
				t.Fatalf("Add: %d, %v", v, err)
			}
			if v, err := qs[1].Add(ctx, "errors", 2); err != nil || v != 7 {
				t.Fatalf("Add from the other worker: %d, %v (want the job's total, 7)", v, err)
			}
			if v, err := qs[1].Add(ctx, "other", 0); err != nil || v != 0 {
				t.Fatalf("another counter: %d, %v", v, err)
			}
			if err := qs[1].Done(ctx, 2, []byte("two")); err != nil {
				t.Fatal(err)
			}
			if err := qs[0].Done(ctx, 3, nil); err == nil {
				t.Fatal("Done of item 3 of 3: no error")
			}
			var got []byte
			switch q := qs[0].(type) {
			case *Local:
				got, _ = q.Result(2)
				if _, ok := q.Result(1); ok {
					t.Fatal("Local.Result of an item not done: ok")
				}
			case *Store:
				got, _ = q.Result(ctx, 2)
			}
			if string(got) != "two" {
				t.Fatalf("result of item 2: %q", got)
			}
		})
	}
}

// TestStoreCollectAndValues: rank 0 collects every result by item and the
// workers see each other's published values.
func TestStoreCollectAndValues(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	qs := queues(t, ctx, "store", 3, 6)
	got := drain(t, ctx, qs)
	for w, items := range got {
		for _, i := range items {
			if err := qs[w].Done(ctx, i, []byte{byte('a' + i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	all, err := qs[0].(*Store).Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range all {
		if string(b) != string(rune('a'+i)) {
			t.Fatalf("collected %q, want a..f by item", all)
		}
	}
	if err := qs[2].(*Store).Set(ctx, "best", []byte("4")); err != nil {
		t.Fatal(err)
	}
	if b, err := qs[1].(*Store).Get(ctx, "best"); err != nil || string(b) != "4" {
		t.Fatalf("Get: %q, %v", b, err)
	}
	short, cancelShort := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancelShort()
	if _, err := qs[0].(*Store).Get(short, "unset"); err == nil {
		t.Fatal("Get of a value nobody set: no error")
	}
}

// TestStoreNamespaces: two queues under other prefixes of one store do not
// share items.
func TestStoreNamespaces(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := dial(t, ctx, newServer(t), 0)
	a, b := NewStore(store.WithPrefix(c, "a/"), 2), NewStore(store.WithPrefix(c, "b/"), 2)
	checkOnce(t, drain(t, ctx, []Queue{a}), 2)
	checkOnce(t, drain(t, ctx, []Queue{b}), 2)
}

func TestStoreAgree(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	addr := newServer(t)
	names := []string{"a.parquet", "b.parquet"}
	for r, mine := range [][]string{names, names, names[:1], {"a.parquet", "c.parquet"}} {
		err := NewStore(dial(t, ctx, addr, r), len(mine)).Agree(ctx, r, mine)
		var le *ListingError
		switch {
		case r <= 1 && err != nil:
			t.Fatalf("rank %d with rank 0's listing: %v", r, err)
		case r == 2 && (!errors.As(err, &le) || le.Rank != 2 || le.Items != 1 || le.Rank0Len != 2):
			t.Fatalf("rank 2 with a shorter listing: err = %v", err)
		case r == 3 && !errors.As(err, &le):
			t.Fatalf("rank 3 with another file: err = %v", err)
		}
	}
}
