package store

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/fathom-ml/fathom/comm/auth"
)

// Client is a connection to a Server. It is safe for concurrent use; requests
// are served one at a time (a blocking Get holds the connection, so use a
// second Client to wait on one key while using the store for others). A
// request whose context ends first returns at once; the server's answer
// to it, due by that request's deadline, is read and dropped by the next
// request, and a request abandoned without a deadline (the server may
// answer much later) leaves the Client unusable: later requests say so.
type Client struct {
	addr string
	mu   sync.Mutex
	conn net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
	// A request whose context ended before its answer came leaves the
	// answer on the connection: owed is the time by which the server
	// sends it (the next request reads it first), broken says the
	// connection cannot be read in step any more (a request half sent,
	// an answer half read, or one the server may hold indefinitely).
	owed   time.Time
	broken error
}

// drainGrace is how long past its promised time an owed answer may take
// to arrive before the connection is given up.
const drainGrace = 2 * time.Second

// Dial connects to the store at addr and authenticates with token, claiming
// rank. It retries refused connections (the server may not be up yet) until
// ctx ends; an authentication refusal is not retried.
func Dial(ctx context.Context, addr string, token []byte, rank int) (*Client, error) {
	var last error
	for attempt := 0; ; attempt++ {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			dl, ok := ctx.Deadline()
			if !ok || time.Until(dl) > 30*time.Second {
				dl = time.Now().Add(30 * time.Second)
			}
			if err = auth.Client(c, token, auth.KindStore, rank, dl); err != nil {
				c.Close()
				return nil, fmt.Errorf("store %s: %w", addr, err)
			}
			c.(*net.TCPConn).SetNoDelay(true)
			return &Client{addr: addr, conn: c, r: bufio.NewReader(c), w: bufio.NewWriter(c)}, nil
		}
		last = err
		wait := time.Duration(min(attempt+1, 20)) * 25 * time.Millisecond
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("store: cannot reach %s: %w (last error: %v)", addr, ctx.Err(), last)
		case <-time.After(wait):
		}
	}
}

// Close closes the connection; a Get blocked in another goroutine returns.
func (c *Client) Close() error { return c.conn.Close() }

func (c *Client) do(ctx context.Context, op byte, key string, val []byte) (byte, []byte, error) {
	if len(key) > maxKey || len(val) > maxValue {
		return 0, nil, fmt.Errorf("store: key %q or value (%d bytes) too large", key, len(val))
	}
	if err := ctx.Err(); err != nil {
		return 0, nil, fmt.Errorf("store %s: %w", c.addr, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return 0, nil, c.broken
	}
	if !c.owed.IsZero() {
		if err := c.drain(); err != nil {
			return 0, nil, err
		}
	}
	start := time.Now()
	wait := int64(-1)
	if dl, ok := ctx.Deadline(); ok {
		wait = max(int64(time.Until(dl)/time.Millisecond), 0)
		c.conn.SetDeadline(dl.Add(2 * time.Second)) // the server answers at dl
	} else {
		c.conn.SetDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { c.conn.SetDeadline(time.Now()) })
	defer stop()
	sent, answered, complete := false, false, false
	defer func() {
		if complete || ctx.Err() == nil || c.broken != nil || !c.owed.IsZero() {
			return
		}
		// The context ended mid-request: what is left on the connection
		// decides whether it can still be used.
		switch {
		case !sent || answered:
			c.broken = fmt.Errorf("store %s: the connection is out of step after an abandoned request (%v)", c.addr, ctx.Err())
		case wait < 0 || start.Add(time.Duration(wait)*time.Millisecond).After(time.Now().Add(drainGrace)):
			c.broken = fmt.Errorf("store %s: the connection is held by an abandoned request the server may answer much later (%v)", c.addr, ctx.Err())
		default:
			c.owed = start.Add(time.Duration(wait) * time.Millisecond)
		}
	}()
	c.w.WriteByte(op)
	c.w.Write(binary.LittleEndian.AppendUint16(nil, uint16(len(key))))
	c.w.WriteString(key)
	c.w.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(val))))
	c.w.Write(val)
	c.w.Write(binary.LittleEndian.AppendUint64(nil, uint64(wait)))
	if err := c.w.Flush(); err != nil {
		return 0, nil, c.wrap(ctx, err)
	}
	sent = true
	var hdr [5]byte
	k, err := io.ReadFull(c.r, hdr[:])
	answered = k > 0 // from here on, part of the answer has been read
	if err != nil {
		return 0, nil, c.wrap(ctx, err)
	}
	n := binary.LittleEndian.Uint32(hdr[1:])
	if n > maxValue {
		c.broken = fmt.Errorf("store %s: response of %d bytes", c.addr, n)
		return 0, nil, c.broken
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(c.r, data); err != nil {
		return 0, nil, c.wrap(ctx, err)
	}
	complete = true // the context may end now: the connection is in step
	return hdr[0], data, nil
}

// drain reads and drops the answer an abandoned request left owed.
func (c *Client) drain() error {
	c.conn.SetDeadline(c.owed.Add(drainGrace))
	c.owed = time.Time{}
	var hdr [5]byte
	_, err := io.ReadFull(c.r, hdr[:])
	if err == nil {
		if n := binary.LittleEndian.Uint32(hdr[1:]); n > maxValue {
			err = fmt.Errorf("response of %d bytes", n)
		} else {
			_, err = c.r.Discard(int(n))
		}
	}
	if err != nil {
		c.broken = fmt.Errorf("store %s: the answer to an abandoned request did not come: %w", c.addr, err)
		return c.broken
	}
	return nil
}

func (c *Client) wrap(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("store %s: %w", c.addr, ctx.Err())
	}
	if errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("store %s: %w", c.addr, ErrClosed)
	}
	return fmt.Errorf("store %s: connection lost: %w", c.addr, err)
}

// Set implements Store.
func (c *Client) Set(ctx context.Context, key string, value []byte) error {
	st, data, err := c.do(ctx, opSet, key, value)
	if err != nil {
		return err
	}
	if st != statusOK {
		return fmt.Errorf("store %s: set %q: %s", c.addr, key, data)
	}
	return nil
}

// Get implements Store.
func (c *Client) Get(ctx context.Context, key string) ([]byte, error) {
	st, data, err := c.do(ctx, opGet, key, nil)
	if err != nil {
		return nil, err
	}
	switch st {
	case statusOK:
		return data, nil
	case statusNotFound:
		return nil, fmt.Errorf("store %s: key %q: %w", c.addr, key, ErrTimeout)
	}
	return nil, fmt.Errorf("store %s: get %q: %s", c.addr, key, data)
}

// Add implements Store.
func (c *Client) Add(ctx context.Context, key string, delta int64) (int64, error) {
	st, data, err := c.do(ctx, opAdd, key, binary.LittleEndian.AppendUint64(nil, uint64(delta)))
	if err != nil {
		return 0, err
	}
	if st != statusOK || len(data) != 8 {
		return 0, fmt.Errorf("store %s: add %q: %s", c.addr, key, data)
	}
	return int64(binary.LittleEndian.Uint64(data)), nil
}

var _ Store = (*Client)(nil)
