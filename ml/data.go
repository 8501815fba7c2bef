package ml

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/data"
)

// Data is what an estimator fits on: this process's rows, and the Comm that
// joins it to the processes holding the rest. The data set is the union of
// every rank's Frame, in rank order.
type Data struct {
	Frame *data.Frame
	// Comm joins the ranks; nil means Single (the Frame is all the data).
	Comm Comm
	// Progress, if set, is told the fit's progress: each iteration of an
	// iterative solver with its objective (the same on every rank), through
	// Report. A Pipeline names the stage. It must return quickly.
	Progress func(Progress)
}

// Progress is one report of a fit in progress.
type Progress struct {
	// Stage is the index of the pipeline stage being fitted (from 0) and
	// StageType its type; both are zero outside a pipeline.
	Stage     int
	StageType string
	// Iteration counts the solver's iterations from 1; Loss is its
	// objective after the iteration (for a GLM, the deviance).
	Iteration int
	Loss      float64
}

// Report tells d.Progress, if set, that iteration iter ended with
// objective loss.
func (d Data) Report(iter int, loss float64) {
	if d.Progress != nil {
		d.Progress(Progress{Iteration: iter, Loss: loss})
	}
}

// Local is the whole data set in this process.
func Local(f *data.Frame) Data { return Data{Frame: f, Comm: Single} }

// Partitioned is this rank's share of a data set spread over c's ranks.
func Partitioned(f *data.Frame, c Comm) Data { return Data{Frame: f, Comm: c} }

// C returns d.Comm, or Single when it is nil.
func (d Data) C() Comm {
	if d.Comm == nil {
		return Single
	}
	return d.Comm
}

// RowOffset returns the global index of this rank's first row, n being
// its number of rows: the rows of the ranks before it (0 when c is nil or
// has one rank).
func RowOffset(c Comm, n int) (int, error) {
	if c == nil || c.Size() == 1 {
		return 0, nil
	}
	counts := make([]float64, c.Size())
	counts[c.Rank()] = float64(n)
	if err := c.AllReduce(counts, OpSum); err != nil {
		return 0, err
	}
	off := 0
	for r := range c.Rank() {
		off += int(counts[r])
	}
	return off, nil
}

// Op is the element-wise reduction of Comm.AllReduce.
type Op int

const (
	OpSum Op = iota
	OpMax
	OpMin
)

// Comm is the little of a process group that fitting needs. Every method is
// collective: all ranks call it, in the same order, with slices of the same
// length.
type Comm interface {
	Rank() int
	Size() int
	// AllReduce replaces x on every rank by the element-wise reduction of
	// every rank's x.
	AllReduce(x []float64, op Op) error
	// AllGatherBytes returns every rank's b, in rank order (b may differ
	// in length from rank to rank).
	AllGatherBytes(b []byte) ([][]byte, error)
	// Broadcast replaces x on every rank by root's x.
	Broadcast(x []float64, root int) error
}

// AllGatherFloats returns every rank's v, in rank order (v may differ in
// length from rank to rank), through c.AllGatherBytes.
func AllGatherFloats(c Comm, v []float64) ([][]float64, error) {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	all, err := c.AllGatherBytes(b)
	if err != nil {
		return nil, err
	}
	out := make([][]float64, len(all))
	for r, b := range all {
		if len(b)%8 != 0 {
			return nil, fmt.Errorf("ml: rank %d sent %d bytes, not whole float64s", r, len(b))
		}
		out[r] = make([]float64, len(b)/8)
		for i := range out[r] {
			out[r][i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
	}
	return out, nil
}

// Single is the Comm of one process: every collective is the identity.
var Single Comm = single{}

type single struct{}

func (single) Rank() int                      { return 0 }
func (single) Size() int                      { return 1 }
func (single) AllReduce([]float64, Op) error  { return nil }
func (single) Broadcast([]float64, int) error { return nil }
func (single) AllGatherBytes(b []byte) ([][]byte, error) {
	return [][]byte{append([]byte(nil), b...)}, nil
}

// Group is the Comm over a comm process group (the job's ranks under
// `fathom run`). A nil group is Single.
func Group(g *comm.Group) Comm {
	if g == nil {
		return Single
	}
	return groupComm{g}
}

type groupComm struct{ g *comm.Group }

func (c groupComm) Rank() int { return c.g.Rank() }
func (c groupComm) Size() int { return c.g.Size() }

func (c groupComm) AllReduce(x []float64, op Op) error {
	var o comm.ReduceOp
	switch op {
	case OpSum:
		o = comm.Sum
	case OpMax:
		o = comm.Max
	case OpMin:
		o = comm.Min
	default:
		return fmt.Errorf("ml: unknown reduction %d", op)
	}
	if len(x) == 0 {
		return nil
	}
	if err := comm.AllReduce(c.g, x, o); err != nil {
		return fmt.Errorf("ml: rank %d: all-reduce of %d values: %w", c.g.Rank(), len(x), err)
	}
	return nil
}

func (c groupComm) Broadcast(x []float64, root int) error {
	if len(x) == 0 {
		return nil
	}
	if err := comm.Broadcast(c.g, x, root); err != nil {
		return fmt.Errorf("ml: rank %d: broadcast of %d values from rank %d: %w", c.g.Rank(), len(x), root, err)
	}
	return nil
}

// AllGatherBytes gathers the lengths first, then the bytes padded to the
// longest, packed eight to an int64.
func (c groupComm) AllGatherBytes(b []byte) ([][]byte, error) {
	n := c.g.Size()
	lens := make([]int64, n)
	if err := comm.AllGather(c.g, lens, []int64{int64(len(b))}); err != nil {
		return nil, fmt.Errorf("ml: rank %d: all-gather of lengths: %w", c.g.Rank(), err)
	}
	longest := int64(0)
	for _, l := range lens {
		longest = max(longest, l)
	}
	words := int((longest + 7) / 8)
	out := make([][]byte, n)
	if words == 0 {
		for i := range out {
			out[i] = []byte{}
		}
		return out, nil
	}
	in := make([]int64, words)
	pad := make([]byte, 8*words)
	copy(pad, b)
	for i := range in {
		in[i] = int64(binary.LittleEndian.Uint64(pad[8*i:]))
	}
	all := make([]int64, n*words)
	if err := comm.AllGather(c.g, all, in); err != nil {
		return nil, fmt.Errorf("ml: rank %d: all-gather of %d bytes: %w", c.g.Rank(), len(b), err)
	}
	for r := range out {
		buf := make([]byte, 8*words)
		for i := range words {
			binary.LittleEndian.PutUint64(buf[8*i:], uint64(all[r*words+i]))
		}
		out[r] = buf[:lens[r]]
	}
	return out, nil
}

// SumCount all-reduces a local count (as float64; exact below 2^53).
func SumCount(c Comm, n int) (int, error) {
	v := []float64{float64(n)}
	if err := c.AllReduce(v, OpSum); err != nil {
		return 0, err
	}
	return int(v[0]), nil
}
