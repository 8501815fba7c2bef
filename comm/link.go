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
//
// A link's tag is 64 bits: the id of the group the message belongs to in
// the high 32 (0 for the group New built; see Subgroup) and the tag within
// that group in the low 32, so the groups sharing a link never take each
// other's messages.
type link interface {
	// send writes one message; it returns when the payload may be reused.
	send(tag uint64, p []byte) error
	// recvInto receives a message of exactly len(dst) bytes into dst.
	recvInto(tag uint64, dst []byte) error
	// recvFunc receives a message of n bytes and hands it to sink in
	// consecutive pieces whose lengths are multiples of 8 (except the last).
	recvFunc(tag uint64, n int, sink func(p []byte)) error
	close() error
	name() string
}

const hdrLen = 16 // tag u32 | group id u32 | length u64

// pieceBytes is the unit in which a received message is handed to a
// reduction: small enough to stay in cache, large enough to amortise calls.
const pieceBytes = 256 << 10

// unexpected buffers messages that arrived before their receive was posted.
type unexpected map[uint64][][]byte

func (u unexpected) take(tag uint64) ([]byte, bool) {
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
//
// Several receives may wait on one inbox at once when groups sharing the
// link (a group and its subgroups) run collectives concurrently. One of them
// at a time owns the stream and reads from it without holding mu; the
// others wait on cond and take their message as soon as the owner has kept
// it, so a receive never waits for another's message to arrive.
type inbox struct {
	g    *Group
	peer int

	mu         sync.Mutex
	cond       sync.Cond // on mu: a message was kept, or the stream's owner left
	reading    bool      // a receive owns the stream
	early      unexpected
	earlyBytes int64

	hdr [hdrLen]byte // used by the stream's owner

	// read hands the next n bytes of the stream to sink in pieces whose
	// lengths are multiples of 8 (except the last); readInto reads the next
	// len(dst) bytes into dst. Their errors are final. Only the stream's
	// owner calls them.
	read     func(n int, sink func(p []byte)) error
	readInto func(dst []byte) error
}

// next reads messages from the stream, keeping the ones with other tags,
// until the message with tag is at its head; rest reads that one, which
// must be n bytes long. The caller owns the stream.
func (b *inbox) next(tag uint64, n int, rest func() error) error {
	for {
		if err := b.readInto(b.hdr[:]); err != nil {
			return err
		}
		t := wireTag(b.hdr[:])
		m := binary.LittleEndian.Uint64(b.hdr[8:])
		if m > 1<<40 {
			return b.g.protocolError(fmt.Errorf("rank %d sent a header claiming %d bytes", b.peer, m))
		}
		if t == tag {
			if int(m) != n {
				return b.g.sizeError(b.peer, int(m), n)
			}
			return rest()
		}
		b.mu.Lock()
		held := b.earlyBytes
		b.mu.Unlock()
		if limit := int64(b.g.opts.MaxEarlyBytes); held+int64(m) > limit {
			return b.g.protocolError(fmt.Errorf("rank %d sent a %d-byte message (%s) that no receive on rank %d has asked for, "+
				"with %d bytes of such messages held already; the limit is %d (Options.MaxEarlyBytes, FATHOM_MAX_EARLY_BYTES): "+
				"ranks called collectives in a different order", b.peer, m, tagString(t), b.g.rank, held, limit))
		}
		buf, err := b.readEarly(int(m))
		if err != nil {
			return err
		}
		b.mu.Lock()
		b.early[t] = append(b.early[t], buf)
		b.earlyBytes += int64(m)
		b.cond.Broadcast()
		b.mu.Unlock()
	}
}

// earlyChunk is the most a kept message's buffer holds before its bytes
// have arrived; it doubles as they do.
const earlyChunk = 1 << 20

// readEarly reads a message of m bytes to keep, growing its buffer as the
// bytes arrive (doubling from earlyChunk), so a header that announces much
// and delivers little costs little memory; the copies add up to less than
// m. Chunk boundaries are multiples of 8, as the shared-memory ring's
// padding requires. The caller owns the stream.
func (b *inbox) readEarly(m int) ([]byte, error) {
	buf := alignedBytes(min(m, earlyChunk))
	for got := 0; ; {
		if err := b.readInto(buf[got:]); err != nil {
			return nil, err
		}
		got = len(buf)
		if got == m {
			return buf, nil
		}
		grown := alignedBytes(min(m, 2*got))
		copy(grown, buf)
		buf = grown
	}
}

// takeEarly returns the oldest kept message with tag, if any. The caller
// holds mu.
func (b *inbox) takeEarly(tag uint64) ([]byte, bool) {
	m, ok := b.early.take(tag)
	if ok {
		b.earlyBytes -= int64(len(m))
	}
	return m, ok
}

// recv receives the next message with tag, which must be n bytes long: a
// kept one is handed to early, one at the head of the stream is read by rest.
func (b *inbox) recv(tag uint64, n int, early func([]byte), rest func() error) error {
	b.mu.Lock()
	if b.cond.L == nil {
		b.cond.L = &b.mu
	}
	for {
		if m, ok := b.takeEarly(tag); ok {
			b.mu.Unlock()
			if len(m) != n {
				return b.g.sizeError(b.peer, len(m), n)
			}
			early(m)
			return nil
		}
		if !b.reading {
			break
		}
		b.cond.Wait()
	}
	b.reading = true
	b.mu.Unlock()
	err := b.next(tag, n, rest)
	b.mu.Lock()
	b.reading = false
	b.cond.Broadcast()
	b.mu.Unlock()
	return err
}

// recvFunc implements link.recvFunc.
func (b *inbox) recvFunc(tag uint64, n int, sink func([]byte)) error {
	return b.recv(tag, n, sink, func() error { return b.read(n, sink) })
}

// recvInto implements link.recvInto.
func (b *inbox) recvInto(tag uint64, dst []byte) error {
	return b.recv(tag, len(dst), func(m []byte) { copy(dst, m) }, func() error { return b.readInto(dst) })
}

// putHeader writes the frame header of a message of n bytes with tag.
func putHeader(h []byte, tag uint64, n int) {
	binary.LittleEndian.PutUint32(h[0:], uint32(tag))
	binary.LittleEndian.PutUint32(h[4:], uint32(tag>>32))
	binary.LittleEndian.PutUint64(h[8:], uint64(n))
}

// wireTag reads the tag of a frame header.
func wireTag(h []byte) uint64 {
	return uint64(binary.LittleEndian.Uint32(h[4:]))<<32 | uint64(binary.LittleEndian.Uint32(h[0:]))
}

// tagString describes a link tag for error messages.
func tagString(tag uint64) string {
	t := uint32(tag)
	what := fmt.Sprintf("tag %d", t)
	if t&(1<<31) != 0 {
		what = fmt.Sprintf("collective %d", t&(1<<31-1))
	}
	if gid := uint32(tag >> 32); gid != 0 {
		return fmt.Sprintf("%s of subgroup %#x", what, gid)
	}
	return what
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

	piece []byte // read buffer (used by the owner of the inbox stream)
}

func newTCPLink(g *Group, peer int, c *net.TCPConn) *tcpLink {
	tuneConn(c)
	l := &tcpLink{inbox: inbox{g: g, peer: peer, early: unexpected{}}, conn: c}
	l.read, l.readInto = l.readPieces, l.readFull
	return l
}

func (l *tcpLink) name() string { return "tcp" }

func (l *tcpLink) send(tag uint64, p []byte) error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	putHeader(l.whdr[:], tag, len(p))
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
