package comm

import (
	"context"
	"io"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/comm/store"
)

const testToken = "test-token-0123456789"

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// newGroups starts n ranks in this process (goroutines as ranks, real TCP on
// 127.0.0.1 and, for TransportSHM/Auto, shared memory) around a store
// server the test owns.
func newGroups(t testing.TB, n int, tr Transport, mod func(*Options)) []*Group {
	t.Helper()
	if tr == TransportSHM && runtime.GOOS != "linux" {
		t.Skip("shared memory is Linux-only")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := store.Serve(ln, []byte(testToken), quietLog)
	addr := ln.Addr().String()
	gs := make([]*Group, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := 0; r < n; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			o := Options{
				Rank: r, WorldSize: n, Token: []byte(testToken), MasterAddr: "127.0.0.1",
				Timeout: 20 * time.Second, RendezvousTimeout: 20 * time.Second, Transport: tr,
				ShmRingBytes: 256 << 10, Logger: quietLog,
				NewStore: func(ctx context.Context) (store.Store, error) {
					return store.Dial(ctx, addr, []byte(testToken), r)
				},
			}
			if mod != nil {
				mod(&o)
			}
			gs[r], errs[r] = New(context.Background(), o)
		}(r)
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	t.Cleanup(func() {
		closeAll(gs)
		srv.Close()
	})
	return gs
}

func closeAll(gs []*Group) {
	var wg sync.WaitGroup
	for _, g := range gs {
		if g == nil {
			continue
		}
		wg.Add(1)
		go func(g *Group) { defer wg.Done(); g.Close() }(g)
	}
	wg.Wait()
}

// onAll runs fn on every rank concurrently and returns the errors by rank.
func onAll(gs []*Group, fn func(g *Group) error) []error {
	errs := make([]error, len(gs))
	var wg sync.WaitGroup
	for r, g := range gs {
		wg.Add(1)
		go func(r int, g *Group) { defer wg.Done(); errs[r] = fn(g) }(r, g)
	}
	wg.Wait()
	return errs
}

func mustAll(t *testing.T, what string, errs []error) {
	t.Helper()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("%s: rank %d: %v", what, r, err)
		}
	}
}
