package comm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// Shared-memory transport between two ranks on the same host, in the spirit
// of NCCL's SHM transport: a file in /dev/shm mapped by both processes holds
// two single-producer single-consumer byte rings, one per direction. The
// producer copies the message into the ring and publishes its new head with
// an atomic store; the consumer reduces or copies straight out of the ring
// and publishes its tail. A waiting side spins briefly, then yields the CPU
// (sched_yield), then sleeps with a growing backoff: no futex, no cgo.
//
// The ranks' TCP connection stays open beside the ring: nothing flows on it,
// but its closing is how a rank learns that its peer died.

const (
	shmCtrl      = 256                   // control block per ring: head at 0, tail at 128 (separate cache lines)
	shmPublish   = 128 << 10             // publish progress at least every this many bytes
	shmSpin      = 64                    // busy polls before yielding
	shmYieldFor  = 2 * time.Millisecond  // yielding polls before sleeping
	shmYieldOver = 50 * time.Microsecond // the same when ranks outnumber cores
	shmMaxSleep  = time.Millisecond      // longest nap
	shmFirstNap  = 20 * time.Microsecond
	shmDirPrefix = "/dev/shm/fathom-"
)

type shmRing struct {
	head, tail *uint64 // bytes ever written / consumed
	data       []byte
	size       uint64
}

func mapRing(mem []byte, off int, size uint64) shmRing {
	return shmRing{
		head: (*uint64)(unsafe.Pointer(&mem[off])),
		tail: (*uint64)(unsafe.Pointer(&mem[off+128])),
		data: mem[off+shmCtrl : off+shmCtrl+int(size)],
		size: size,
	}
}

type shmLink struct {
	inbox // reads through shmLink.read, handing out the ring in place
	mem   []byte
	tx    shmRing
	rx    shmRing

	wmu  sync.Mutex
	whdr [hdrLen]byte

	closeOnce sync.Once
}

func (l *shmLink) name() string { return "shm" }

// wait polls cond until it holds, the group aborts or is closed
// (Group.pollUntil).
func (l *shmLink) wait(cond func() bool) error { return l.g.pollUntil(cond) }

// pollUntil polls cond until it holds, the group aborts or is closed: a
// few busy polls, then polls that yield the CPU (to other goroutines and,
// with sched_yield, to other processes — ranks often outnumber cores) for
// up to shmYieldFor, then sleeps with exponential backoff up to
// shmMaxSleep. Go's sleeps are coarse (tens of microseconds or more), so
// the yielding phase is what keeps small-message latency low.
func (g *Group) pollUntil(cond func() bool) error {
	nap := shmFirstNap
	var yieldStart time.Time
	sleeping := false // past the yielding phase: only naps from now on
	for i := 0; ; i++ {
		if cond() {
			return nil
		}
		if g.aborted.Load() {
			return g.abortError()
		}
		if g.closing.Load() {
			return ErrClosed
		}
		switch {
		case i < shmSpin:
		case yieldStart.IsZero():
			yieldStart = time.Now()
		case !sleeping && (i%64 != 0 || time.Since(yieldStart) < g.shmYieldFor):
			runtime.Gosched()
			syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0)
		default:
			sleeping = true
			time.Sleep(nap)
			nap = min(2*nap, shmMaxSleep)
		}
	}
}

// write appends p, padded to a multiple of 8 bytes, to the tx ring.
func (l *shmLink) write(p []byte) error {
	r := &l.tx
	head := atomic.LoadUint64(r.head)
	padded := uint64(len(p)+7) &^ 7
	for done := uint64(0); done < padded; {
		tail := atomic.LoadUint64(r.tail)
		raceAcquire()
		free := r.size - (head - tail)
		if free == 0 {
			if err := l.wait(func() bool { return atomic.LoadUint64(r.tail) != tail }); err != nil {
				return err
			}
			continue
		}
		off := head % r.size
		n := min(free, r.size-off, padded-done, shmPublish)
		if done < uint64(len(p)) {
			c := min(n, uint64(len(p))-done)
			copy(r.data[off:off+c], p[done:done+c])
		}
		head += n
		done += n
		raceRelease()
		atomic.StoreUint64(r.head, head)
	}
	return nil
}

// read consumes n bytes (plus padding) from the rx ring, handing the valid
// bytes to sink in place; a span is released only after sink returns.
func (l *shmLink) read(n int, sink func([]byte)) error {
	r := &l.rx
	tail := atomic.LoadUint64(r.tail)
	padded := uint64(n+7) &^ 7
	for done := uint64(0); done < padded; {
		head := atomic.LoadUint64(r.head)
		raceAcquire()
		if head == tail {
			if err := l.wait(func() bool { return atomic.LoadUint64(r.head) != tail }); err != nil {
				return err
			}
			continue
		}
		off := tail % r.size
		k := min(head-tail, r.size-off, padded-done, shmPublish)
		if done < uint64(n) {
			valid := min(k, uint64(n)-done)
			sink(r.data[off : off+valid])
		}
		tail += k
		done += k
		raceRelease()
		atomic.StoreUint64(r.tail, tail)
	}
	return nil
}

// readInto consumes len(dst) bytes (plus padding) from the rx ring into dst.
func (l *shmLink) readInto(dst []byte) error {
	off := 0
	return l.read(len(dst), func(p []byte) { off += copy(dst[off:], p) })
}

func (l *shmLink) send(tag uint64, p []byte) error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	putHeader(l.whdr[:], tag, len(p))
	if err := l.write(l.whdr[:]); err != nil {
		return err
	}
	return l.write(p)
}

func (l *shmLink) close() error {
	var err error
	l.closeOnce.Do(func() { err = syscall.Munmap(l.mem) })
	return err
}

// watchConn turns the closing of the peer's (otherwise idle) TCP connection
// into a lost-peer abort.
func (l *shmLink) watchConn(c *net.TCPConn) {
	defer l.g.bg.Done()
	var b [1]byte
	_, err := c.Read(b[:])
	if l.g.closing.Load() || l.g.aborted.Load() {
		return
	}
	if err == nil {
		err = errors.New("unexpected data on the shared-memory control connection")
	}
	l.g.linkError(l.peer, "connection to", err)
}

// setupShm upgrades the links to same-host peers to shared memory. Both
// ranks of a pair take the same decision from the published peer infos; the
// lower rank creates and sizes the file, the higher maps it and acknowledges,
// then the lower unlinks it, so nothing is left in /dev/shm even on a crash
// after setup.
func (g *Group) setupShm(ctx context.Context, infos []peerInfo) error {
	if g.opts.Transport == TransportTCP {
		return nil
	}
	me := infos[g.rank]
	var wg sync.WaitGroup
	errs := make([]error, g.size)
	for r := range g.size {
		if r == g.rank {
			continue
		}
		same := infos[r].Host == me.Host && infos[r].Shm && me.Shm
		if !same {
			if g.opts.Transport == TransportSHM {
				return fmt.Errorf("shared memory required but rank %d runs on host %q (this rank: %q) or disabled it", r, infos[r].Host, me.Host)
			}
			continue
		}
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			errs[r] = g.upgradeShm(ctx, r)
		}(r)
	}
	wg.Wait()
	local := 1
	for r, l := range g.links {
		if _, ok := l.(*shmLink); ok && r != g.rank {
			local++
		}
	}
	// more ranks than cores: a yielding rank mostly steals the CPU from the
	// one it waits for, so go to sleep (and let the kernel schedule) sooner
	g.shmYieldFor = shmYieldFor
	if local > runtime.NumCPU() {
		g.shmYieldFor = shmYieldOver
	}
	for r, err := range errs {
		if err == nil {
			continue
		}
		if g.opts.Transport == TransportSHM {
			return fmt.Errorf("shared memory with rank %d: %w", r, err)
		}
		g.opts.Logger.Warn("fathom comm: shared memory unavailable, using TCP", "rank", g.rank, "peer", r, "err", err)
	}
	return nil
}

func (g *Group) upgradeShm(ctx context.Context, r int) error {
	c := g.conns[r]
	dl, _ := ctx.Deadline()
	c.SetDeadline(dl)
	defer c.SetDeadline(time.Time{})
	lo, hi := min(g.rank, r), max(g.rank, r)
	path := fmt.Sprintf("%s%s-%d-%d", shmDirPrefix, g.jobID, lo, hi)
	var mem []byte
	var b [1]byte
	if g.rank == lo {
		size := 2 * (shmCtrl + g.opts.ShmRingBytes)
		var err error
		mem, err = createShm(path, size)
		if err != nil {
			c.Write([]byte{0})
			return err
		}
		defer os.Remove(path)
		if _, err := c.Write([]byte{1}); err != nil {
			syscall.Munmap(mem)
			return err
		}
		if _, err := io.ReadFull(c, b[:]); err != nil || b[0] != 1 {
			syscall.Munmap(mem)
			return fmt.Errorf("rank %d could not map %s", r, path)
		}
	} else {
		if _, err := io.ReadFull(c, b[:]); err != nil {
			return err
		}
		if b[0] != 1 {
			return fmt.Errorf("rank %d could not create %s", r, path)
		}
		var err error
		mem, err = openShm(path)
		if err != nil {
			c.Write([]byte{0})
			return err
		}
		if _, err := c.Write([]byte{1}); err != nil {
			syscall.Munmap(mem)
			return err
		}
	}
	ringBytes := uint64(len(mem)/2 - shmCtrl)
	a := mapRing(mem, 0, ringBytes)                          // lo → hi
	bRing := mapRing(mem, shmCtrl+int(ringBytes), ringBytes) // hi → lo
	l := &shmLink{inbox: inbox{g: g, peer: r, early: unexpected{}}, mem: mem}
	l.inbox.read, l.inbox.readInto = l.read, l.readInto
	if g.rank == lo {
		l.tx, l.rx = a, bRing
	} else {
		l.tx, l.rx = bRing, a
	}
	g.links[r] = l
	g.bg.Add(1)
	go l.watchConn(c)
	return nil
}

func createShm(path string, size int) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := f.Truncate(int64(size)); err != nil {
		os.Remove(path)
		return nil, err
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("mmap %s: %w", path, err)
	}
	return mem, nil
}

func openShm(path string) ([]byte, error) {
	mem, err := mapShm(path)
	if err != nil {
		return nil, err
	}
	if size := len(mem); size < 2*(shmCtrl+4096) || (size/2-shmCtrl)%8 != 0 {
		syscall.Munmap(mem)
		return nil, fmt.Errorf("%s has a bad size %d", path, size)
	}
	return mem, nil
}

// mapShm maps the whole file at path, shared.
func mapShm(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := int(st.Size())
	if size == 0 {
		return nil, fmt.Errorf("%s is empty", path)
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap %s: %w", path, err)
	}
	return mem, nil
}
