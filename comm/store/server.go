package store

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fathom-ml/fathom/comm/auth"
)

// Server is the TCP store hosted by rank 0. It keeps everything in memory.
type Server struct {
	ln     net.Listener
	token  []byte
	log    *slog.Logger
	refuse *auth.RefusalLog
	mu     sync.Mutex
	data   map[string][]byte
	ready  map[string]chan struct{} // closed when the key is first set
	conns  map[net.Conn]struct{}
	closed chan struct{}
	wg     sync.WaitGroup
	busy   atomic.Int64 // requests received but not yet answered
}

// Serve starts serving the store on ln. Connections must authenticate with
// token. logger receives a warning per refused connection, at most
// auth.RefusalBurst a minute and then a count (nil: slog.Default()).
func Serve(ln net.Listener, token []byte, logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.Default()
	}
	s := &Server{
		ln: ln, token: token, log: logger, refuse: auth.NewRefusalLog(logger, "fathom store"),
		data: map[string][]byte{}, ready: map[string]chan struct{}{},
		conns: map[net.Conn]struct{}{}, closed: make(chan struct{}),
	}
	s.wg.Add(1)
	go s.acceptLoop()
	return s
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// WaitIdle waits until no request is being served (blocked Gets count as
// being served), or until timeout. The host of a failing job calls it before
// exiting so that ranks waiting on a key it just set receive the value.
func (s *Server) WaitIdle(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for s.busy.Load() > 0 {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// Close stops the server and drops every client connection.
func (s *Server) Close() error {
	s.mu.Lock()
	select {
	case <-s.closed:
		s.mu.Unlock()
		return nil
	default:
	}
	close(s.closed)
	err := s.ln.Close()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.refuse.Stop()
	return err
}

func (s *Server) acceptLoop() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			select {
			case <-s.closed:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			time.Sleep(10 * time.Millisecond) // e.g. EMFILE: back off, then retry
			continue
		}
		s.mu.Lock()
		select {
		case <-s.closed:
			s.mu.Unlock()
			c.Close()
			return
		default:
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serveConn(c)
	}
}

func (s *Server) serveConn(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.Close()
	}()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	claim, err := auth.Server(c, s.token, auth.KindStore, time.Now().Add(10*time.Second))
	if err != nil {
		s.refuse.Warn("fathom store: refused connection", "remote", c.RemoteAddr().String(), "rank_claim", claim, "err", err)
		return
	}
	r := bufio.NewReader(c)
	w := bufio.NewWriter(c)
	for {
		op, key, val, wait, err := readRequest(r)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				s.log.Debug("fathom store: connection ended", "remote", c.RemoteAddr().String(), "rank", claim, "err", err)
			}
			return
		}
		s.busy.Add(1)
		status, out := s.handle(op, key, val, wait)
		err = writeResponse(w, status, out)
		s.busy.Add(-1)
		if err != nil {
			return
		}
	}
}

func (s *Server) handle(op byte, key string, val []byte, wait time.Duration) (byte, []byte) {
	switch op {
	case opSet:
		s.mu.Lock()
		s.data[key] = val
		if ch, ok := s.ready[key]; ok {
			close(ch)
			delete(s.ready, key)
		}
		s.mu.Unlock()
		return statusOK, nil
	case opAdd:
		if len(val) != 8 {
			return statusError, []byte("add: delta must be 8 bytes")
		}
		s.mu.Lock()
		var cur int64
		if old, ok := s.data[key]; ok && len(old) == 8 {
			cur = int64(binary.LittleEndian.Uint64(old))
		}
		cur += int64(binary.LittleEndian.Uint64(val))
		nv := binary.LittleEndian.AppendUint64(nil, uint64(cur))
		s.data[key] = nv
		if ch, ok := s.ready[key]; ok {
			close(ch)
			delete(s.ready, key)
		}
		s.mu.Unlock()
		return statusOK, nv
	case opGet:
		s.mu.Lock()
		if v, ok := s.data[key]; ok {
			s.mu.Unlock()
			return statusOK, v
		}
		ch, ok := s.ready[key]
		if !ok {
			ch = make(chan struct{})
			s.ready[key] = ch
		}
		s.mu.Unlock()
		var timeout <-chan time.Time
		if wait >= 0 {
			t := time.NewTimer(wait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-ch:
			s.mu.Lock()
			v := s.data[key]
			s.mu.Unlock()
			return statusOK, v
		case <-timeout:
			return statusNotFound, nil
		case <-s.closed:
			return statusError, []byte("store closed")
		}
	}
	return statusError, []byte(fmt.Sprintf("unknown op %d", op))
}

func readRequest(r *bufio.Reader) (op byte, key string, val []byte, wait time.Duration, err error) {
	var hdr [3]byte
	if _, err = io.ReadFull(r, hdr[:]); err != nil {
		return
	}
	op = hdr[0]
	kl := int(binary.LittleEndian.Uint16(hdr[1:]))
	if kl > maxKey {
		return 0, "", nil, 0, fmt.Errorf("store: key of %d bytes", kl)
	}
	kb := make([]byte, kl)
	if _, err = io.ReadFull(r, kb); err != nil {
		return
	}
	var vl [4]byte
	if _, err = io.ReadFull(r, vl[:]); err != nil {
		return
	}
	n := binary.LittleEndian.Uint32(vl[:])
	if n > maxValue {
		return 0, "", nil, 0, fmt.Errorf("store: value of %d bytes", n)
	}
	val = make([]byte, n)
	if _, err = io.ReadFull(r, val); err != nil {
		return
	}
	var wb [8]byte
	if _, err = io.ReadFull(r, wb[:]); err != nil {
		return
	}
	ms := int64(binary.LittleEndian.Uint64(wb[:]))
	wait = -1
	if ms >= 0 {
		wait = time.Duration(ms) * time.Millisecond
	}
	return op, string(kb), val, wait, nil
}

func writeResponse(w *bufio.Writer, status byte, data []byte) error {
	w.WriteByte(status)
	w.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(data))))
	w.Write(data)
	return w.Flush()
}
