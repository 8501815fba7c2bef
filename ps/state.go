package ps

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/fathom-ml/fathom/optim"
	"github.com/fathom-ml/fathom/tensor"
)

// ServerState is a server's optimizer state as it travels (opState,
// opLoadState): its optimizer's StateDict over the server's segments
// (tensor keys "<segment>.<name>"), the groups' hyperparameters in group
// order. The groups' parameter lists are the server's own and do not
// travel.
type ServerState struct {
	Hypers  []map[string]float64
	Scalars map[string]float64
	Tensors map[string][]float32
}

// maxStateBytes bounds a state frame of a server holding total elements:
// a few buffers per element and the metadata.
func maxStateBytes(total int) int { return 16*4*total + 1<<20 }

func encodeState(st *optim.StateDict) ([]byte, error) {
	ws := ServerState{Scalars: st.Scalars, Tensors: map[string][]float32{}}
	for _, g := range st.Groups {
		ws.Hypers = append(ws.Hypers, g.Hyper)
	}
	for k, t := range st.Tensors {
		if t.DType() != tensor.Float32 {
			return nil, fmt.Errorf("optimizer state %q is %v, want float32", k, t.DType())
		}
		ws.Tensors[k] = t.Contiguous().Float32s()
	}
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(&ws); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func decodeState(b []byte) (*ServerState, error) {
	var ws ServerState
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&ws); err != nil {
		return nil, err
	}
	return &ws, nil
}

// writeBytes writes a frame of op whose payload is b.
func writeBytes(w io.Writer, op uint32, b []byte) error {
	h := make([]byte, 0, headerLen+len(b))
	h = appendHeader(h, op, len(b))
	_, err := w.Write(append(h, b...))
	return err
}

// readBytes reads a payload of n bytes, at most limit.
func readBytes(r io.Reader, n, limit int) ([]byte, error) {
	if n > limit {
		return nil, fmt.Errorf("a state of %d bytes, at most %d expected", n, limit)
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return b, err
}

// state encodes the server's optimizer state (opState).
func (s *Server) state() ([]byte, error) {
	s.mu.Lock()
	st := s.opt.State()
	s.mu.Unlock()
	return encodeState(st)
}

// loadState restores the optimizer state of ws (opLoadState), checked
// against the server's own layout.
func (s *Server) loadState(ws *ServerState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	own := s.opt.State()
	if len(ws.Hypers) != len(own.Groups) {
		return fmt.Errorf("a state of %d parameter groups, this server's optimizer has %d", len(ws.Hypers), len(own.Groups))
	}
	st := &optim.StateDict{Optimizer: own.Optimizer, Scalars: ws.Scalars, Tensors: map[string]*tensor.Tensor{}}
	for g, h := range ws.Hypers {
		st.Groups = append(st.Groups, optim.GroupState{Params: own.Groups[g].Params, Hyper: h})
	}
	for k, v := range ws.Tensors {
		st.Tensors[k] = tensor.FromFloat32(v, len(v))
	}
	return s.opt.LoadState(st)
}

// FetchState asks every server for its optimizer state (worker 0, between
// two steps); an entry is nil for a server that holds nothing.
func (c *Client) FetchState() ([]*ServerState, error) {
	out := make([]*ServerState, len(c.conns))
	err := c.each(func(sc *serverConn) error {
		h, err := sc.call(header{op: opState})
		if err != nil {
			return err
		}
		if h.op != opStateData {
			return fmt.Errorf("ps: parameter server %d at %s answered a state request with %s", sc.idx, sc.addr, opName(h.op))
		}
		b, err := readBytes(sc.c, h.n, maxStateBytes(len(sc.buf)))
		if err != nil {
			return fmt.Errorf("ps: parameter server %d at %s: %w", sc.idx, sc.addr, err)
		}
		ws, err := decodeState(b)
		if err != nil {
			return fmt.Errorf("ps: parameter server %d at %s: optimizer state: %w", sc.idx, sc.addr, err)
		}
		out[sc.idx] = ws
		return nil
	})
	return out, err
}

// LoadState sends every server its optimizer state back (worker 0, after
// Init and before any step); states is FetchState's answer, by server.
// A server that refuses it fails the job: the next pull reports why.
func (c *Client) LoadState(states []*ServerState) error {
	if len(states) != len(c.conns) {
		return fmt.Errorf("ps: the state of %d servers for a job of %d", len(states), len(c.conns))
	}
	return c.each(func(sc *serverConn) error {
		ws := states[sc.idx]
		if ws == nil {
			return fmt.Errorf("ps: no optimizer state for parameter server %d", sc.idx)
		}
		var b bytes.Buffer
		if err := gob.NewEncoder(&b).Encode(ws); err != nil {
			return err
		}
		sc.c.SetWriteDeadline(time.Now().Add(sc.timeout))
		if err := writeBytes(sc.c, opLoadState, b.Bytes()); err != nil {
			return sc.wrap(err)
		}
		return nil
	})
}

// The servers' states in a checkpoint's optimizer StateDict: server s's
// entries under "server<s>/" (tensor and scalar keys as the server's
// optimizer names them, group g's hyperparameters as scalars
// "server<s>/group<g>/<name>", the number of groups as "server<s>/groups").
// The prefix keeps them apart from the local optimizer's own entries,
// which name parameters by index.

func serverPrefix(s int) string { return "server" + strconv.Itoa(s) + "/" }

// putStates adds states to st.
func putStates(st *optim.StateDict, states []*ServerState) {
	if st.Scalars == nil {
		st.Scalars = map[string]float64{}
	}
	if st.Tensors == nil {
		st.Tensors = map[string]*tensor.Tensor{}
	}
	for s, ws := range states {
		if ws == nil {
			continue
		}
		p := serverPrefix(s)
		st.Scalars[p+"groups"] = float64(len(ws.Hypers))
		for g, h := range ws.Hypers {
			for k, v := range h {
				st.Scalars[p+"group"+strconv.Itoa(g)+"/"+k] = v
			}
		}
		for k, v := range ws.Scalars {
			st.Scalars[p+k] = v
		}
		for k, v := range ws.Tensors {
			st.Tensors[p+k] = tensor.FromFloat32(v, len(v))
		}
	}
}

// takeStates reads the states of servers servers out of st; want[s]
// tells whether server s holds parameters (and so must have a state).
func takeStates(st *optim.StateDict, want []bool) ([]*ServerState, error) {
	out := make([]*ServerState, len(want))
	for s, w := range want {
		p := serverPrefix(s)
		n, ok := st.Scalars[p+"groups"]
		if !w {
			continue
		}
		if !ok {
			return nil, fmt.Errorf("ps: the checkpoint holds no optimizer state of parameter server %d", s)
		}
		ws := &ServerState{Hypers: make([]map[string]float64, int(n)), Scalars: map[string]float64{}, Tensors: map[string][]float32{}}
		for g := range ws.Hypers {
			ws.Hypers[g] = map[string]float64{}
		}
		for k, v := range st.Scalars {
			rest, ok := strings.CutPrefix(k, p)
			if !ok || rest == "groups" {
				continue
			}
			if gk, ok := strings.CutPrefix(rest, "group"); ok {
				if gs, name, ok := strings.Cut(gk, "/"); ok {
					g, err := strconv.Atoi(gs)
					if err != nil || g < 0 || g >= len(ws.Hypers) {
						return nil, fmt.Errorf("ps: checkpoint entry %q names no group of parameter server %d", k, s)
					}
					ws.Hypers[g][name] = v
					continue
				}
			}
			ws.Scalars[rest] = v
		}
		for k, t := range st.Tensors {
			if rest, ok := strings.CutPrefix(k, p); ok {
				if t.DType() != tensor.Float32 {
					return nil, fmt.Errorf("ps: checkpoint entry %q is %v, want float32", k, t.DType())
				}
				ws.Tensors[rest] = t.Contiguous().Float32s()
			}
		}
		out[s] = ws
	}
	return out, nil
}

// exchangeState serves worker 0's opState (answering with the state) or
// opLoadState (restoring the state it carries). A synchronous server only:
// an asynchronous one applies gradients as they come, so no moment of it
// is between two steps of every worker.
func (s *Server) exchangeState(c io.ReadWriter, h header, wbuf *[]byte) error {
	if s.o.Async {
		return fmt.Errorf("%s: an asynchronous server's state is not exchanged", opName(h.op))
	}
	if h.op == opState {
		b, err := s.state()
		if err != nil {
			return err
		}
		*wbuf = appendHeader((*wbuf)[:0], opStateData, len(b))
		*wbuf = append(*wbuf, b...)
		_, err = c.Write(*wbuf)
		return err
	}
	b, err := readBytes(c, h.n, maxStateBytes(s.total))
	if err != nil {
		return err
	}
	ws, err := decodeState(b)
	if err != nil {
		return fmt.Errorf("optimizer state: %w", err)
	}
	s.mu.Lock()
	inited := s.inited
	s.mu.Unlock()
	if !inited {
		return errors.New("optimizer state before the initial parameters")
	}
	if err := s.loadState(ws); err != nil {
		return fmt.Errorf("optimizer state: %w", err)
	}
	return nil
}
