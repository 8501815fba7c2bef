package comm

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// Window is memory every rank of a group on one host maps: each rank owns
// a float32 buffer of the same length (Part(r)), writes its own and reads
// the others' in place, with no message and no copy through a transport.
// Rank r's part is a file in /dev/shm that r creates and every rank maps;
// the files are unlinked as soon as all have mapped them, so nothing is
// left behind. A Barrier orders the writes and reads: what a rank wrote
// to its part before the barrier, every rank may read after it, and a
// rank may overwrite its part only after a later barrier that the readers
// pass once they are done reading.
//
// Windows exist only where every peer of a root group (not a subgroup) is
// reached through shared memory; NewWindow returns ErrNoWindow otherwise,
// or when some rank cannot create or map its part (every rank alike, so
// all can fall back to messages). Their memory stays mapped until Close.
type Window struct {
	g     *Group
	parts [][]float32
	mems  [][]byte
	flags []*uint64 // flags[r]: the barriers rank r has reached
	seq   uint64
	tmp   []float32 // SumChunk's partial sums, for more than 2 ranks
}

// ErrNoWindow is returned by NewWindow for a group whose ranks do not all
// share memory.
var ErrNoWindow = errors.New("comm: shared-memory windows need every rank on one host, connected through shared memory")

// windowCtrl is the control page in front of every part: rank r's barrier
// counter at offset 0.
const windowCtrl = 4096

// NewWindow creates a window of n float32 elements per rank. Every rank
// must call it, in the same order as its other collectives, with the same
// n. The parts start zeroed.
func NewWindow(g *Group, n int) (*Window, error) {
	if n < 0 {
		return nil, fmt.Errorf("comm: NewWindow: negative length %d", n)
	}
	// Whether every link is shared memory is decided per pair, so a rank
	// may see only shared memory where another does not: agree first.
	ok := []int64{0}
	if g.sharesMemory() {
		ok[0] = 1
	}
	if err := AllReduce(g, ok, Min); err != nil {
		return nil, fmt.Errorf("comm: NewWindow: %w", err)
	}
	if ok[0] == 0 {
		return nil, ErrNoWindow
	}
	// A unique name: the job, the group's operation counter (the same on
	// every rank at this call) and the owner.
	g.mu.Lock()
	id := g.seq
	g.mu.Unlock()
	path := func(r int) string { return fmt.Sprintf("%s%s-w%d-%d", shmDirPrefix, g.jobID, id, r) }
	size := windowCtrl + 4*n
	w := &Window{g: g, parts: make([][]float32, g.size), mems: make([][]byte, g.size), flags: make([]*uint64, g.size)}
	own, err := createShm(path(g.rank), size)
	if err != nil {
		// Tell the others before failing, so none waits for this part.
		own = nil
	}
	w.mems[g.rank] = own
	// Every rank learns whether all parts exist before anyone maps them.
	ok[0] = 1
	if own == nil {
		ok[0] = 0
	}
	if aerr := AllReduce(g, ok, Min); aerr != nil || ok[0] == 0 {
		w.Close()
		if own != nil {
			os.Remove(path(g.rank))
		}
		return nil, w.failed(aerr, err, "another rank could not create its part")
	}
	for r := range g.size {
		if r == g.rank {
			continue
		}
		if w.mems[r], err = mapShm(path(r)); err == nil && len(w.mems[r]) != size {
			err = fmt.Errorf("%s has %d bytes, want %d", path(r), len(w.mems[r]), size)
		}
		if err != nil {
			break
		}
	}
	ok[0] = 1
	if err != nil {
		ok[0] = 0
	}
	aerr := AllReduce(g, ok, Min) // everyone has mapped every part (or failed)
	os.Remove(path(g.rank))
	if aerr != nil || ok[0] == 0 {
		w.Close()
		return nil, w.failed(aerr, err, "another rank could not map the parts")
	}
	for r, mem := range w.mems {
		w.flags[r] = (*uint64)(unsafe.Pointer(&mem[0]))
		if n > 0 {
			w.parts[r] = unsafe.Slice((*float32)(unsafe.Pointer(&mem[windowCtrl])), n)
		} else {
			w.parts[r] = []float32{}
		}
	}
	return w, nil
}

// failed is NewWindow's error: the group's (aerr) when the agreement
// itself failed, otherwise ErrNoWindow with the cause, this rank's (err)
// or another's (other), logged, so that every rank falls back alike.
func (w *Window) failed(aerr, err error, other string) error {
	if aerr != nil {
		return fmt.Errorf("comm: NewWindow: %w", aerr)
	}
	cause := other
	if err != nil {
		cause = err.Error()
	}
	w.g.opts.Logger.Warn("fathom comm: shared-memory window unavailable", "rank", w.g.rank, "err", cause)
	return fmt.Errorf("%w (%s)", ErrNoWindow, cause)
}

// sharesMemory reports whether g is a root group whose every peer link is
// shared memory.
func (g *Group) sharesMemory() bool {
	if g.root != nil && g.root != g || g.size < 2 {
		return false
	}
	for r, l := range g.links {
		if _, ok := l.(*shmLink); !ok && r != g.rank {
			return false
		}
	}
	return true
}

// Part returns rank r's buffer. Only rank r may write it, and only as the
// Window's doc says.
func (w *Window) Part(r int) []float32 { return w.parts[r] }

// Barrier returns once every rank has called it as many times as this
// rank (a counter per rank in its part's control page, polled like the
// shared-memory transport: spin, yield, sleep). It fails when the group
// aborts or closes.
func (w *Window) Barrier() error {
	w.seq++
	raceRelease()
	atomic.StoreUint64(w.flags[w.g.rank], w.seq)
	for r, f := range w.flags {
		if r == w.g.rank {
			continue
		}
		if err := w.g.pollUntil(func() bool { return atomic.LoadUint64(f) >= w.seq }); err != nil {
			return err
		}
	}
	raceAcquire()
	return nil
}

// SumChunk sums, over the ranks, this rank's chunk of the range [off,
// off+n) of every part, in place in its own part: with m = n/Size(),
// rank r's elements off+r·m ... off+(r+1)·m−1 become the sum of those of
// every part. The additions run in the order of the ring reduce-scatter
// (ReduceScatterInPlace on the same vectors: the same bits), starting
// from rank r+1's values and adding rank r's last. Call it between a
// Barrier that follows every rank's writes to the range and one that
// precedes the next.
func (w *Window) SumChunk(off, n int) {
	size, r := w.g.size, w.g.rank
	m := n / size
	lo, hi := off+r*m, off+(r+1)*m
	own := w.parts[r][lo:hi]
	if size == 2 {
		reduceInto(own, w.parts[1-r][lo:hi], Sum)
		return
	}
	if cap(w.tmp) < m {
		w.tmp = make([]float32, m)
	}
	acc := w.tmp[:m]
	copy(acc, w.parts[(r+1)%size][lo:hi])
	for k := 2; k < size; k++ {
		reduceInto(acc, w.parts[(r+k)%size][lo:hi], Sum)
	}
	reduceInto(own, acc, Sum)
}

// Close unmaps the window; its parts must not be used afterwards.
func (w *Window) Close() {
	for r, mem := range w.mems {
		if mem != nil {
			syscall.Munmap(mem)
			w.mems[r] = nil
		}
	}
	w.parts = nil
}
