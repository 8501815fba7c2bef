package comm

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

// inbox is the receive side both links share: it reads the framed messages
// of one peer through the link's transport and keeps those that arrive
// before their receive is posted, up to Options.MaxEarlyBytes in all, so a
// peer that sends what nobody asks for (or a corrupt length) gets a
// protocol error instead of exhausting this process's memory.
type inbox struct {
	g    *Group
	peer int

	mu         sync.Mutex
	hdr        [hdrLen]byte
	early      unexpected
	earlyBytes int64

	// read hands the next n bytes of the stream to sink in pieces whose
	// lengths are multiples of 8 (except the last); readInto reads the next
	// len(dst) bytes into dst. Their errors are final.
	read     func(n int, sink func(p []byte)) error
	readInto func(dst []byte) error
}

// next reads headers until the message with tag is at the head of the
// stream, keeping others; it returns that message's length.
func (b *inbox) next(tag uint32) (int, error) {
	for {
		if err := b.readInto(b.hdr[:]); err != nil {
			return 0, err
		}
		t := binary.LittleEndian.Uint32(b.hdr[0:])
		n := binary.LittleEndian.Uint64(b.hdr[8:])
		if n > 1<<40 {
			return 0, b.g.protocolError(fmt.Errorf("rank %d sent a header claiming %d bytes", b.peer, n))
		}
		if t == tag {
			return int(n), nil
		}
		if limit := int64(b.g.opts.MaxEarlyBytes); b.earlyBytes+int64(n) > limit {
			return 0, b.g.protocolError(fmt.Errorf("rank %d sent a %d-byte message (tag %d) that no receive on rank %d has asked for, "+
				"with %d bytes of such messages held already; the limit is %d (Options.MaxEarlyBytes, FATHOM_MAX_EARLY_BYTES): "+
				"ranks called collectives in a different order", b.peer, n, t, b.g.rank, b.earlyBytes, limit))
		}
		buf := alignedBytes(int(n))
		if err := b.readInto(buf); err != nil {
			return 0, err
		}
		b.early[t] = append(b.early[t], buf)
		b.earlyBytes += int64(n)
	}
}

// takeEarly returns the oldest kept message with tag, if any.
func (b *inbox) takeEarly(tag uint32) ([]byte, bool) {
	m, ok := b.early.take(tag)
	if ok {
		b.earlyBytes -= int64(len(m))
	}
	return m, ok
}

// recv receives the next message with tag, which must be n bytes long: a
// kept one is handed to early, one at the head of the stream is read by rest.
func (b *inbox) recv(tag uint32, n int, early func([]byte), rest func() error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if m, ok := b.takeEarly(tag); ok {
		if len(m) != n {
			return b.g.sizeError(b.peer, len(m), n)
		}
		early(m)
		return nil
	}
	got, err := b.next(tag)
	if err != nil {
		return err
	}
	if got != n {
		return b.g.sizeError(b.peer, got, n)
	}
	return rest()
}

// recvFunc implements link.recvFunc.
func (b *inbox) recvFunc(tag uint32, n int, sink func([]byte)) error {
	return b.recv(tag, n, sink, func() error { return b.read(n, sink) })
}

// recvInto implements link.recvInto.
func (b *inbox) recvInto(tag uint32, dst []byte) error {
	return b.recv(tag, len(dst), func(m []byte) { copy(dst, m) }, func() error { return b.readInto(dst) })
}

// tcpLink is a link over one TCP connection (Nagle off). Sends write the
// header and the caller's bytes with one writev; receives read straight into
// the destination, or into a reused piece buffer when reducing.
type tcpLink struct {
	inbox
	conn *net.TCPConn

	wmu  sync.Mutex
	whdr [hdrLen]byte
	wvec [2][]byte

	piece []byte // read buffer (used under inbox.mu)
}

func newTCPLink(g *Group, peer int, c *net.TCPConn) *tcpLink {
	tuneConn(c)
	l := &tcpLink{inbox: inbox{g: g, peer: peer, early: unexpected{}}, conn: c}
	l.read, l.readInto = l.readPieces, l.readFull
	return l
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

// readPieces reads n bytes through the piece buffer, handing each piece to
// sink.
func (l *tcpLink) readPieces(n int, sink func([]byte)) error {
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

func (l *tcpLink) readFull(dst []byte) error {
	if _, err := io.ReadFull(l.conn, dst); err != nil {
		return l.g.linkError(l.peer, "receive from", err)
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
