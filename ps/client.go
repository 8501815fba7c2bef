package ps

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/fathom-ml/fathom/comm/auth"
)

// ClientOptions configure Dial.
type ClientOptions struct {
	// Worker is this worker's number (0 ≤ Worker < workers); worker 0
	// sends the initial parameters.
	Worker int
	// Addrs are the servers' addresses, by server index.
	Addrs []string
	// Plan is the parameter sharding (Plan), the same on every process.
	Plan [][]Segment
	// Token is the job secret.
	Token []byte
	// Timeout bounds every exchange with a server (default 5 minutes).
	Timeout time.Duration
}

// Client is a worker's connections to the parameter servers.
type Client struct {
	o     ClientOptions
	conns []*serverConn // nil for a server that holds nothing
}

type serverConn struct {
	idx        int
	addr       string
	c          net.Conn
	segs       []Segment
	timeout    time.Duration // ClientOptions.Timeout
	buf        []float32
	rbuf, wbuf []byte
}

// Dial connects to every server that holds parameters, proving the job
// token, retrying until ctx ends (a server may still be starting).
func Dial(ctx context.Context, o ClientOptions) (*Client, error) {
	if len(o.Addrs) != len(o.Plan) {
		return nil, fmt.Errorf("ps: %d server addresses for a plan of %d servers", len(o.Addrs), len(o.Plan))
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
	c := &Client{o: o, conns: make([]*serverConn, len(o.Plan))}
	for s, segs := range o.Plan {
		if len(segs) == 0 {
			continue
		}
		var d net.Dialer
		var conn net.Conn
		var err error
		for try := 0; ; try++ {
			conn, err = d.DialContext(ctx, "tcp", o.Addrs[s])
			if err == nil || ctx.Err() != nil || try == 50 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("ps: worker %d: connecting to parameter server %d at %s: %w", o.Worker, s, o.Addrs[s], err)
		}
		if err := auth.Client(conn, o.Token, auth.KindPS, o.Worker, time.Now().Add(10*time.Second)); err != nil {
			conn.Close()
			c.Close()
			return nil, fmt.Errorf("ps: worker %d: parameter server %d at %s: %w", o.Worker, s, o.Addrs[s], err)
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.SetNoDelay(true)
		}
		c.conns[s] = &serverConn{idx: s, addr: o.Addrs[s], c: conn, segs: segs, timeout: o.Timeout, buf: make([]float32, planElems(segs))}
	}
	return c, nil
}

// Init sends worker 0's initial parameters (params[i] is parameter i's
// elements) to the servers.
func (c *Client) Init(params [][]float32) error {
	return c.each(func(sc *serverConn) error {
		sc.pack(params)
		return sc.write(header{op: opInit}, sc.buf)
	})
}

// Step pushes the gradient of step (grads[i]: parameter i's, nil for
// zeros) with the step's learning rate, then pulls the parameters for
// step+1 into params. The servers are served concurrently.
func (c *Client) Step(step int, lr float64, grads, params [][]float32) error {
	return c.each(func(sc *serverConn) error {
		sc.pack(grads)
		if err := sc.write(header{op: opPush, step: int64(step), lr: lr}, sc.buf); err != nil {
			return err
		}
		return sc.pull(step+1, params)
	})
}

// Pull reads the parameters for step into params.
func (c *Client) Pull(step int, params [][]float32) error {
	return c.each(func(sc *serverConn) error { return sc.pull(step, params) })
}

// Close tells the servers this worker has finished and closes the
// connections.
func (c *Client) Close() error {
	var errs []error
	for _, sc := range c.conns {
		if sc == nil {
			continue
		}
		sc.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if err := writeFrame(sc.c, &sc.wbuf, header{op: opDone}, nil); err != nil {
			errs = append(errs, sc.wrap(err))
		}
		sc.c.Close()
	}
	c.conns = nil
	return errors.Join(errs...)
}

// each runs f on every server's connection concurrently.
func (c *Client) each(f func(*serverConn) error) error {
	errs := make([]error, len(c.conns))
	var wg sync.WaitGroup
	for i, sc := range c.conns {
		if sc == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(sc)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// pack copies the server's segments of vals (zeros for a nil entry) into buf.
func (sc *serverConn) pack(vals [][]float32) {
	off := 0
	for _, s := range sc.segs {
		dst := sc.buf[off : off+s.Len()]
		if v := vals[s.Param]; v != nil {
			copy(dst, v[s.Lo:s.Hi])
		} else {
			clear(dst)
		}
		off += s.Len()
	}
}

func (sc *serverConn) write(h header, payload []float32) error {
	sc.c.SetWriteDeadline(time.Now().Add(sc.timeout))
	if err := writeFrame(sc.c, &sc.wbuf, h, payload); err != nil {
		return sc.wrap(err)
	}
	return nil
}

// pull asks for the parameters of step and scatters them into params.
func (sc *serverConn) pull(step int, params [][]float32) error {
	h, err := sc.call(header{op: opPull, step: int64(step)})
	if err != nil {
		return err
	}
	if h.op != opParams || h.n != len(sc.buf) {
		return fmt.Errorf("ps: parameter server %d at %s answered a pull with %s of %d values, want params of %d",
			sc.idx, sc.addr, opName(h.op), h.n, len(sc.buf))
	}
	if err := readFloats(sc.c, &sc.rbuf, sc.buf); err != nil {
		return sc.wrap(err)
	}
	off := 0
	for _, s := range sc.segs {
		copy(params[s.Param][s.Lo:s.Hi], sc.buf[off:off+s.Len()])
		off += s.Len()
	}
	return nil
}

// call sends a request with no payload and reads the header of the
// answer, turning the server's error answer into an error that names it.
func (sc *serverConn) call(req header) (header, error) {
	if err := sc.write(req, nil); err != nil {
		return header{}, err
	}
	sc.c.SetReadDeadline(time.Now().Add(sc.timeout))
	h, err := readHeader(sc.c)
	if err != nil {
		return header{}, sc.wrap(err)
	}
	if h.op == opError {
		return header{}, fmt.Errorf("ps: parameter server %d at %s: %s", sc.idx, sc.addr, readError(sc.c, h.n))
	}
	return h, nil
}

// wrap names the server in a transport error: the server died or the
// network between us broke.
func (sc *serverConn) wrap(err error) error {
	return &ServerLostError{Server: sc.idx, Addr: sc.addr, Err: err}
}

// ServerLostError reports a broken connection to a parameter server.
type ServerLostError struct {
	Server int
	Addr   string
	Err    error
}

func (e *ServerLostError) Error() string {
	return fmt.Sprintf("ps: lost parameter server %d at %s (the process died or the network broke; its shard of the parameters is gone, so the job stops): %v",
		e.Server, e.Addr, e.Err)
}

func (e *ServerLostError) Unwrap() error { return e.Err }

// Abort closes the connections without telling the servers this worker
// finished: a synchronous server then fails naming it, an asynchronous one
// carries on without it.
func (c *Client) Abort() {
	for _, sc := range c.conns {
		if sc != nil {
			sc.c.Close()
		}
	}
	c.conns = nil
}
