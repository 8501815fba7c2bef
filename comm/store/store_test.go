package store

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func newServer(t *testing.T, token string, logw io.Writer) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if logw == nil {
		logw = io.Discard
	}
	s := Serve(ln, []byte(token), slog.New(slog.NewTextHandler(logw, nil)))
	t.Cleanup(func() { s.Close() })
	return s
}

// dial connects to s with the tests' token as rank; the client is closed
// when the test ends.
func dial(t *testing.T, s *Server, rank int) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, s.Addr().String(), []byte("tok"), rank)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestSetGetAdd(t *testing.T) {
	s := newServer(t, "tok", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	const n = 6
	var wg sync.WaitGroup
	errs := make([]error, n)
	for r := 0; r < n; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			c, err := Dial(ctx, s.Addr().String(), []byte("tok"), r)
			if err != nil {
				errs[r] = err
				return
			}
			defer c.Close()
			if err := c.Set(ctx, "addr/"+string(rune('a'+r)), []byte{byte(r)}); err != nil {
				errs[r] = err
				return
			}
			for q := 0; q < n; q++ {
				v, err := c.Get(ctx, "addr/"+string(rune('a'+q)))
				if err != nil || !bytes.Equal(v, []byte{byte(q)}) {
					errs[r] = errors.Join(err, errors.New("wrong value"))
					return
				}
			}
			if _, err := c.Add(ctx, "count", int64(r+1)); err != nil {
				errs[r] = err
			}
		}(r)
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	c := dial(t, s, 0)
	got, err := c.Add(ctx, "count", 0)
	if err != nil || got != n*(n+1)/2 {
		t.Fatalf("count = %d, %v; want %d", got, err, n*(n+1)/2)
	}
}

func TestGetTimeout(t *testing.T) {
	s := newServer(t, "tok", nil)
	c := dial(t, s, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Get(ctx, "never")
	if err == nil || time.Since(start) > 3*time.Second {
		t.Fatalf("Get = %v after %v", err, time.Since(start))
	}
	// The connection is still usable afterwards, whether the server's
	// answer came first or was left owed.
	if err := c.Set(context.Background(), "k", []byte("v")); err != nil {
		t.Fatalf("set after timeout: %v", err)
	}
}

func TestWrongTokenRefusedAndLogged(t *testing.T) {
	var logbuf syncBuffer
	s := newServer(t, "right-token", &logbuf)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := Dial(ctx, s.Addr().String(), []byte("wrong-token"), 5)
	if err == nil {
		t.Fatal("dial with a wrong token succeeded")
	}
	deadline := time.Now().Add(2 * time.Second)
	for !strings.Contains(logbuf.String(), "refused") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	log := logbuf.String()
	if !strings.Contains(log, "rank_claim=5") || !strings.Contains(log, "127.0.0.1") {
		t.Errorf("log lacks address or claim: %q", log)
	}
	if strings.Contains(log, "right-token") || strings.Contains(log, "wrong-token") {
		t.Errorf("log leaks a token: %q", log)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestCloseWakesWaiters(t *testing.T) {
	s := newServer(t, "tok", nil)
	c := dial(t, s, 1)
	done := make(chan error, 1)
	go func() {
		_, err := c.Get(context.Background(), "abort")
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	s.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Get returned no error after the server closed")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Get still blocked 5s after the server closed")
	}
}

// FuzzReadRequest feeds arbitrary bytes (what an authenticated but buggy or
// hostile client could send) to the request parser: it must fail cleanly.
func FuzzReadRequest(f *testing.F) {
	f.Add([]byte{opSet, 1, 0, 'k', 1, 0, 0, 0, 'v', 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{opGet, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, in []byte) {
		op, key, val, _, err := readRequest(bufio.NewReader(bytes.NewReader(in)))
		if err != nil {
			return
		}
		if len(key) > maxKey || len(val) > maxValue || op == 0 && len(in) == 0 {
			t.Fatalf("parsed oversize request: key %d value %d", len(key), len(val))
		}
	})
}

// Two generations share one server and never see each other's keys.
func TestWithPrefixSeparatesNamespaces(t *testing.T) {
	s := newServer(t, "tok", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c := dial(t, s, 0)
	g0, g1 := WithPrefix(c, "g0/"), WithPrefix(c, "g1/")
	if err := g0.Set(ctx, "job", []byte("old")); err != nil {
		t.Fatal(err)
	}
	if n, err := g1.Add(ctx, "count", 2); err != nil || n != 2 {
		t.Fatalf("Add = %d, %v", n, err)
	}
	short, cancelShort := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancelShort()
	// Under load the deadline may pass before the request is sent: either
	// way the key was not found.
	if _, err := g1.Get(short, "job"); !errors.Is(err, ErrTimeout) && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("generation 1 sees generation 0's key: %v", err)
	}
	if v, err := c.Get(ctx, "g0/job"); err != nil || string(v) != "old" {
		t.Fatalf("raw key: %q, %v", v, err)
	}
	if err := g1.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestAbandonedRequest: a Get whose context ends before the server's
// answer leaves that answer on the connection. The next request reads
// it first and gets its own answer, never the abandoned one; a Get the
// server may hold indefinitely (no deadline) leaves the connection
// unusable, and later requests say so instead of reading out of step.
func TestAbandonedRequest(t *testing.T) {
	s := newServer(t, "tok", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := dial(t, s, 0)
	if err := c.Set(ctx, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	// The server holds the Get for 300 ms; the caller gives up after 30.
	for range 3 {
		short, stop := context.WithTimeout(ctx, 300*time.Millisecond)
		time.AfterFunc(30*time.Millisecond, stop)
		if _, err := c.Get(short, "missing"); !errors.Is(err, context.Canceled) {
			t.Fatalf("abandoned Get: %v, want context.Canceled", err)
		}
		stop()
		if v, err := c.Get(ctx, "k"); err != nil || string(v) != "v" {
			t.Fatalf("Get after an abandoned one: %q, %v; want \"v\"", v, err)
		}
		if n, err := c.Add(ctx, "n", 1); err != nil || n < 1 {
			t.Fatalf("Add after an abandoned Get: %d, %v", n, err)
		}
	}
	// A Get without deadline, abandoned: the server might answer any time.
	open, stop := context.WithCancel(ctx)
	time.AfterFunc(30*time.Millisecond, stop)
	if _, err := c.Get(open, "never"); !errors.Is(err, context.Canceled) {
		t.Fatalf("abandoned Get: %v, want context.Canceled", err)
	}
	if v, err := c.Get(ctx, "k"); err == nil || !strings.Contains(err.Error(), "abandoned") {
		t.Fatalf("Get on a connection held by an abandoned Get: %q, %v; want an error saying so", v, err)
	}
	// An expired context costs nothing on a sound connection.
	c2 := dial(t, s, 1)
	done, stop2 := context.WithCancel(ctx)
	stop2()
	if _, err := c2.Get(done, "k"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Get with an ended context: %v", err)
	}
	if v, err := c2.Get(ctx, "k"); err != nil || string(v) != "v" {
		t.Fatalf("Get after an ended context: %q, %v", v, err)
	}
}

// endingCtx reports no error when first asked, then that it was
// cancelled: a context ending just as its request completes.
type endingCtx struct {
	context.Context
	asked atomic.Int32
}

func (c *endingCtx) Err() error {
	if c.asked.Add(1) == 1 {
		return nil
	}
	return context.Canceled
}

// TestRequestCompletedAsContextEnds: a request whose answer came in full
// leaves the connection in step even if its context ends right after.
func TestRequestCompletedAsContextEnds(t *testing.T) {
	s := newServer(t, "tok", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := dial(t, s, 0)
	if err := c.Set(&endingCtx{Context: context.Background()}, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(ctx, "k"); err != nil || string(v) != "v" {
		t.Fatalf("Get after a request whose context ended as it completed: %q, %v", v, err)
	}
}
