// Package commtest starts process groups for tests: every rank a goroutine
// of the test process, over real TCP on 127.0.0.1 (and shared memory when
// asked), around a rendezvous store the test owns. Packages built on comm
// (comm/tensorcomm, data-parallel training) test against it.
//
//	gs := commtest.Groups(t, 3, comm.TransportTCP, nil)
//	errs := commtest.OnAll(gs, func(g *comm.Group) error { return comm.Barrier(g) })
//
// Package comm's own tests use an in-package copy of this harness (they
// cannot import a package that imports comm).
package commtest

import (
	"context"
	"io"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/store"
)

// Token is the job token of the groups Groups starts.
const Token = "commtest-token-0123456789"

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// Groups starts n ranks with transport tr and returns their groups by rank;
// mod, if not nil, adjusts each rank's options before New. The groups and
// the store are closed when the test ends. Shared memory is skipped off
// Linux.
func Groups(t testing.TB, n int, tr comm.Transport, mod func(*comm.Options)) []*comm.Group {
	t.Helper()
	if tr == comm.TransportSHM && runtime.GOOS != "linux" {
		t.Skip("shared memory is Linux-only")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := store.Serve(ln, []byte(Token), quiet)
	addr := ln.Addr().String()
	gs := make([]*comm.Group, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := 0; r < n; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			o := comm.Options{
				Rank: r, WorldSize: n, Token: []byte(Token), MasterAddr: "127.0.0.1",
				Timeout: 20 * time.Second, RendezvousTimeout: 20 * time.Second, Transport: tr,
				ShmRingBytes: 256 << 10, Logger: quiet,
				NewStore: func(ctx context.Context) (store.Store, error) {
					return store.Dial(ctx, addr, []byte(Token), r)
				},
			}
			if mod != nil {
				mod(&o)
			}
			gs[r], errs[r] = comm.New(context.Background(), o)
		}(r)
	}
	wg.Wait()
	t.Cleanup(func() {
		OnAll(gs, func(g *comm.Group) error {
			if g != nil {
				g.Close()
			}
			return nil
		})
		srv.Close()
	})
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	return gs
}

// OnAll runs fn on every group concurrently and returns the errors by
// index.
func OnAll(gs []*comm.Group, fn func(g *comm.Group) error) []error {
	errs := make([]error, len(gs))
	var wg sync.WaitGroup
	for i, g := range gs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = fn(g) }()
	}
	wg.Wait()
	return errs
}

// MustAll fails the test at the first error of errs, naming its index.
func MustAll(t testing.TB, what string, errs []error) {
	t.Helper()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("%s: rank %d: %v", what, r, err)
		}
	}
}
