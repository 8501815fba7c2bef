package dist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// link carries framed messages to and from one peer. Messages between a
// pair arrive in the order they were sent; each carries a tag. A receive for
// tag T consumes the next message with tag T; messages with other tags that
// arrive first are buffered (a copy) until someone asks for them.
type link interface {
	// send writes one message; it returns when the payload may be reused.
	send(tag uint32, p []byte) error
	// recvInto receives a message of exactly len(dst) bytes into dst.
	recvInto(tag uint32, dst []byte) error
	// recvFunc receives a message of n bytes and hands it to sink in
	// consecutive pieces whose lengths are multiples of 8 (except the last).
	recvFunc(tag uint32, n int, sink func(p []byte)) error
	close() error
	name() string
}

const hdrLen = 16 // tag u32 | reserved u32 | length u64

// pieceBytes is the unit in which a received message is handed to a
// reduction: small enough to stay in cache, large enough to amortise calls.
const pieceBytes = 256 << 10

// unexpected buffers messages that arrived before their receive was posted.
type unexpected map[uint32][][]byte

func (u unexpected) take(tag uint32) ([]byte, bool) {
	q := u[tag]
	if len(q) == 0 {
		return nil, false
	}
	m := q[0]
	q[0] = nil
	if len(q) == 1 {
		delete(u, tag)
	} else {
		u[tag] = q[1:]
	}
	return m, true
}

// tcpLink is a link over one TCP connection (Nagle off). Sends write the
// header and the caller's bytes with one writev; receives read straight into
// the destination, or into a reused piece buffer when reducing.
type tcpLink struct {
	g    *Group
	peer int
	conn *net.TCPConn

	wmu  sync.Mutex
	whdr [hdrLen]byte
	wvec [2][]byte

	rmu   sync.Mutex
	rhdr  [hdrLen]byte
	piece []byte
	early unexpected
}

func newTCPLink(g *Group, peer int, c *net.TCPConn) *tcpLink {
	tuneConn(c)
	return &tcpLink{g: g, peer: peer, conn: c, early: unexpected{}}
}

func (l *tcpLink) name() string { return "tcp" }

func (l *tcpLink) send(tag uint32, p []byte) error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	binary.LittleEndian.PutUint32(l.whdr[0:], tag)
	binary.LittleEndian.PutUint64(l.whdr[8:], uint64(len(p)))
	l.wvec[0], l.wvec[1] = l.whdr[:], p
	bufs := net.Buffers(l.wvec[:])
	_, err := bufs.WriteTo(l.conn)
	l.wvec[1] = nil
	if err != nil {
		return l.g.linkError(l.peer, "send to", err)
	}
	return nil
}

// next reads headers until the message with tag is at the head of the
// stream, buffering others; it returns that message's length.
func (l *tcpLink) next(tag uint32) (int, error) {
	for {
		if _, err := io.ReadFull(l.conn, l.rhdr[:]); err != nil {
			return 0, l.g.linkError(l.peer, "receive from", err)
		}
		t := binary.LittleEndian.Uint32(l.rhdr[0:])
		n := binary.LittleEndian.Uint64(l.rhdr[8:])
		if n > 1<<40 {
			return 0, l.g.protocolError(fmt.Errorf("rank %d sent a header claiming %d bytes", l.peer, n))
		}
		if t == tag {
			return int(n), nil
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(l.conn, buf); err != nil {
			return 0, l.g.linkError(l.peer, "receive from", err)
		}
		l.early[t] = append(l.early[t], buf)
	}
}

func (l *tcpLink) recvInto(tag uint32, dst []byte) error {
	l.rmu.Lock()
	defer l.rmu.Unlock()
	if m, ok := l.early.take(tag); ok {
		if len(m) != len(dst) {
			return l.g.sizeError(l.peer, len(m), len(dst))
		}
		copy(dst, m)
		return nil
	}
	n, err := l.next(tag)
	if err != nil {
		return err
	}
	if n != len(dst) {
		return l.g.sizeError(l.peer, n, len(dst))
	}
	if _, err := io.ReadFull(l.conn, dst); err != nil {
		return l.g.linkError(l.peer, "receive from", err)
	}
	return nil
}

func (l *tcpLink) recvFunc(tag uint32, n int, sink func([]byte)) error {
	l.rmu.Lock()
	defer l.rmu.Unlock()
	if m, ok := l.early.take(tag); ok {
		if len(m) != n {
			return l.g.sizeError(l.peer, len(m), n)
		}
		sink(m)
		return nil
	}
	got, err := l.next(tag)
	if err != nil {
		return err
	}
	if got != n {
		return l.g.sizeError(l.peer, got, n)
	}
	if l.piece == nil {
		l.piece = alignedBytes(pieceBytes)
	}
	for n > 0 {
		k := min(n, len(l.piece))
		if _, err := io.ReadFull(l.conn, l.piece[:k]); err != nil {
			return l.g.linkError(l.peer, "receive from", err)
		}
		sink(l.piece[:k])
		n -= k
	}
	return nil
}

// interrupt makes blocked reads and writes return at once (abort).
func (l *tcpLink) interrupt() { l.conn.SetDeadline(time.Unix(1, 0)) }

func (l *tcpLink) close() error { return l.conn.Close() }

// alignedBytes returns n bytes with 8-byte alignment (viewable as any Number).
func alignedBytes(n int) []byte {
	w := make([]int64, (n+7)/8)
	return asBytes(w)[:n]
}

// isConnLoss reports whether err means the peer went away (as opposed to our
// own deadline firing).
func isConnLoss(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ETIMEDOUT) || errors.Is(err, syscall.EHOSTUNREACH)
}

var _ = os.ErrDeadlineExceeded
