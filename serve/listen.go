package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/signal"
	"syscall"
	"time"
)

// Listen says where ListenAndServe listens and how it stops.
type Listen struct {
	Addr string // host:port; beyond loopback Options.Token must be set
	// Grace is the longest time to finish requests in flight at shutdown.
	Grace time.Duration
	// Ready, when set, is called once the server listens, with the address
	// it listens on (a port of 0 picked).
	Ready func(addr net.Addr) error
}

// ListenAndServe serves models with opts on l.Addr until ctx is done or
// the process gets SIGINT or SIGTERM, then shuts down gracefully:
// requests in flight are answered first, for at most l.Grace. Without a
// token it refuses an address beyond the loopback interface, both as
// written and as bound, with ErrTokenRequired.
func ListenAndServe(ctx context.Context, models []Model, opts Options, l Listen) error {
	s, err := New(models, opts)
	if err != nil {
		return fmt.Errorf("%w (--name gives a model another name)", err)
	}
	if opts.Token == "" && !loopbackAddr(l.Addr) {
		s.Shutdown(context.Background())
		return fmt.Errorf("--addr %s: %w", l.Addr, ErrTokenRequired)
	}
	ln, err := net.Listen("tcp", l.Addr)
	if err != nil {
		s.Shutdown(context.Background())
		return err
	}
	if opts.Token == "" && !IsLoopback(ln.Addr()) {
		ln.Close()
		s.Shutdown(context.Background())
		return fmt.Errorf("%s: %w", l.Addr, ErrTokenRequired)
	}
	if l.Ready != nil {
		if err := l.Ready(ln.Addr()); err != nil {
			ln.Close()
			s.Shutdown(context.Background())
			return err
		}
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	select {
	case err := <-served:
		s.Shutdown(context.Background())
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), l.Grace)
	defer cancel()
	err = s.Shutdown(sctx)
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// loopbackAddr reports whether a host:port names the loopback interface
// (an empty host means every interface).
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
