package comm

import (
	"fmt"

	"github.com/fathom-ml/fathom/comm/sched"
)

// sendAsync starts a send on its own goroutine so that the caller can
// receive at the same time (a full-duplex step).
func sendAsync(l link, tag uint64, p []byte) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- l.send(tag, p) }()
	return ch
}

// exchange sends p to `to` while receiving into dst from `from`.
func (g *Group) exchange(tag uint64, to int, p []byte, from int, dst []byte) error {
	ch := sendAsync(g.links[to], tag, p)
	err := g.links[from].recvInto(tag, dst)
	if serr := <-ch; err == nil {
		err = serr
	}
	return err
}

// recvReduce receives len(dst) elements from peer and reduces them into dst
// piece by piece, straight from the transport's buffer.
func recvReduce[T Number](g *Group, tag uint64, from link, dst []T, op ReduceOp) error {
	off := 0
	return from.recvFunc(tag, len(dst)*elemSize[T](), func(p []byte) {
		src := fromBytes[T](p)
		reduceInto(dst[off:off+len(src)], src, op)
		off += len(src)
	})
}

func (g *Group) checkRoot(root int) error {
	if root < 0 || root >= g.size {
		return fmt.Errorf("comm: root %d out of range for world size %d", root, g.size)
	}
	return nil
}

func (g *Group) checkPeer(peer int) error {
	if peer < 0 || peer >= g.size || peer == g.rank {
		return fmt.Errorf("comm: rank %d: peer %d invalid in a group of %d", g.rank, peer, g.size)
	}
	return nil
}

// ---- broadcast ----

// Broadcast copies root's x into x on every rank.
func Broadcast[T Number](g *Group, x []T, root int) error {
	if err := g.checkRoot(root); err != nil {
		return err
	}
	return g.do("broadcast", -1, func(tag uint64) error { return broadcast(g, tag, x, root) })
}

// BroadcastAsync is the asynchronous Broadcast.
func BroadcastAsync[T Number](g *Group, x []T, root int) *Work {
	if err := g.checkRoot(root); err != nil {
		return doneWork(err)
	}
	return g.submit("broadcast", -1, func(tag uint64) error { return broadcast(g, tag, x, root) })
}

// broadcast uses a binomial tree: ceil(log2 N) rounds, each forwarding the
// whole message. Large messages are cut into pieces that flow down the tree
// one after another, so the rounds overlap.
func broadcast[T Number](g *Group, tag uint64, x []T, root int) error {
	if g.size == 1 {
		return nil
	}
	parent, children := sched.Binomial(g.rank, g.size, root)
	b := asBytes(x)
	const piece = 1 << 20
	for off := 0; off < len(b) || off == 0; off += piece {
		p := b[off:min(off+piece, len(b))]
		if parent >= 0 {
			if err := g.links[parent].recvInto(tag, p); err != nil {
				return err
			}
		}
		for _, c := range children {
			if err := g.links[c].send(tag, p); err != nil {
				return err
			}
		}
		if len(b) == 0 {
			break
		}
	}
	return nil
}

// ---- all-gather ----

// AllGather gathers every rank's in into out, rank r's contribution at
// out[r*len(in):(r+1)*len(in)]. len(out) must be Size()*len(in).
func AllGather[T Number](g *Group, out, in []T) error {
	if len(out) != g.size*len(in) {
		return fmt.Errorf("comm: AllGather: len(out)=%d, want %d×%d", len(out), g.size, len(in))
	}
	return g.do("allgather", -1, func(tag uint64) error { return allGather(g, tag, out, in) })
}

// AllGatherAsync is the asynchronous AllGather.
func AllGatherAsync[T Number](g *Group, out, in []T) *Work {
	if len(out) != g.size*len(in) {
		return doneWork(fmt.Errorf("comm: AllGather: len(out)=%d, want %d×%d", len(out), g.size, len(in)))
	}
	return g.submit("allgather", -1, func(tag uint64) error { return allGather(g, tag, out, in) })
}

func allGather[T Number](g *Group, tag uint64, out, in []T) error {
	m := len(in)
	copy(out[g.rank*m:], in)
	return ringAllGather(g, tag, out, func(c int) (int, int) { return c * m, (c + 1) * m })
}

// ringAllGather runs the all-gather half of the ring on x, where chunk c
// spans bounds(c) and this rank already holds chunk rank.
func ringAllGather[T Number](g *Group, tag uint64, x []T, bounds func(c int) (int, int)) error {
	next, prev := sched.Next(g.rank, g.size), sched.Prev(g.rank, g.size)
	for _, st := range sched.RingAllGather(g.rank, g.size) {
		ss, se := bounds(st.Send)
		rs, re := bounds(st.Recv)
		if err := g.exchange(tag, next, asBytes(x[ss:se]), prev, asBytes(x[rs:re])); err != nil {
			return err
		}
	}
	return nil
}

// ---- reduce-scatter ----

// ReduceScatter reduces in element-wise over all ranks and leaves block r of
// the result (out has len(in)/Size() elements) on rank r. in is not modified.
func ReduceScatter[T Number](g *Group, out, in []T, op ReduceOp) error {
	if err := checkRS(g, out, in, op); err != nil {
		return err
	}
	return g.do("reducescatter", -1, func(tag uint64) error { return reduceScatter(g, tag, out, in, op) })
}

// ReduceScatterAsync is the asynchronous ReduceScatter.
func ReduceScatterAsync[T Number](g *Group, out, in []T, op ReduceOp) *Work {
	if err := checkRS(g, out, in, op); err != nil {
		return doneWork(err)
	}
	return g.submit("reducescatter", -1, func(tag uint64) error { return reduceScatter(g, tag, out, in, op) })
}

func checkRS[T Number](g *Group, out, in []T, op ReduceOp) error {
	if !validOp[T](op) {
		return fmt.Errorf("comm: ReduceScatter: invalid op %v", op)
	}
	if len(in) != g.size*len(out) {
		return fmt.Errorf("comm: ReduceScatter: len(in)=%d, want %d×len(out)=%d", len(in), g.size, g.size*len(out))
	}
	return nil
}

func reduceScatter[T Number](g *Group, tag uint64, out, in []T, op ReduceOp) error {
	m := len(out)
	work := scratchOf[T](g, len(in))
	copy(work, in)
	if err := ringReduceScatter(g, tag, work, op, func(c int) (int, int) { return c * m, (c + 1) * m }); err != nil {
		return err
	}
	copy(out, work[g.rank*m:(g.rank+1)*m])
	if op == Avg {
		divide(out, g.size)
	}
	return nil
}

// ringReduceScatter runs the reduce-scatter half of the ring on x in place:
// afterwards chunk rank of x holds the reduction over all ranks.
func ringReduceScatter[T Number](g *Group, tag uint64, x []T, op ReduceOp, bounds func(c int) (int, int)) error {
	next, prev := sched.Next(g.rank, g.size), sched.Prev(g.rank, g.size)
	for _, st := range sched.RingReduceScatter(g.rank, g.size) {
		ss, se := bounds(st.Send)
		rs, re := bounds(st.Recv)
		ch := sendAsync(g.links[next], tag, asBytes(x[ss:se]))
		err := recvReduce(g, tag, g.links[prev], x[rs:re], op)
		if serr := <-ch; err == nil {
			err = serr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// ---- gather / scatter ----

// Gather collects every rank's in on root: out (used on root only) receives
// rank r's in at out[r*len(in):].
func Gather[T Number](g *Group, out, in []T, root int) error {
	if err := checkGS(g, "Gather", out, in, root, len(out)); err != nil {
		return err
	}
	return g.do("gather", -1, func(tag uint64) error { return gather(g, tag, out, in, root) })
}

// GatherAsync is the asynchronous Gather.
func GatherAsync[T Number](g *Group, out, in []T, root int) *Work {
	if err := checkGS(g, "Gather", out, in, root, len(out)); err != nil {
		return doneWork(err)
	}
	return g.submit("gather", -1, func(tag uint64) error { return gather(g, tag, out, in, root) })
}

func checkGS[T Number](g *Group, name string, big, small []T, root, n int) error {
	if err := g.checkRoot(root); err != nil {
		return err
	}
	if g.rank == root && n != g.size*len(small) {
		return fmt.Errorf("comm: %s: root buffer has %d elements, want %d×%d", name, n, g.size, len(small))
	}
	return nil
}

func gather[T Number](g *Group, tag uint64, out, in []T, root int) error {
	m := len(in)
	if g.rank != root {
		return g.links[root].send(tag, asBytes(in))
	}
	copy(out[root*m:], in)
	for r := 0; r < g.size; r++ {
		if r != root {
			if err := g.links[r].recvInto(tag, asBytes(out[r*m:(r+1)*m])); err != nil {
				return err
			}
		}
	}
	return nil
}

// Scatter sends block r of root's in (len Size()*len(out), used on root
// only) to rank r's out.
func Scatter[T Number](g *Group, out, in []T, root int) error {
	if err := checkGS(g, "Scatter", out, out, root, len(in)); err != nil {
		return err
	}
	return g.do("scatter", -1, func(tag uint64) error { return scatter(g, tag, out, in, root) })
}

// ScatterAsync is the asynchronous Scatter.
func ScatterAsync[T Number](g *Group, out, in []T, root int) *Work {
	if err := checkGS(g, "Scatter", out, out, root, len(in)); err != nil {
		return doneWork(err)
	}
	return g.submit("scatter", -1, func(tag uint64) error { return scatter(g, tag, out, in, root) })
}

func scatter[T Number](g *Group, tag uint64, out, in []T, root int) error {
	m := len(out)
	if g.rank != root {
		return g.links[root].recvInto(tag, asBytes(out))
	}
	for r := 0; r < g.size; r++ {
		if r != root {
			if err := g.links[r].send(tag, asBytes(in[r*m:(r+1)*m])); err != nil {
				return err
			}
		}
	}
	copy(out, in[root*m:(root+1)*m])
	return nil
}

// ---- barrier ----

// Barrier returns once every rank has entered it (dissemination barrier:
// ceil(log2 N) rounds of empty messages).
func Barrier(g *Group) error {
	return g.do("barrier", -1, func(tag uint64) error { return barrier(g, tag) })
}

// BarrierAsync is the asynchronous Barrier.
func BarrierAsync(g *Group) *Work {
	return g.submit("barrier", -1, func(tag uint64) error { return barrier(g, tag) })
}

func barrier(g *Group, tag uint64) error {
	to, from := sched.Dissemination(g.rank, g.size)
	for k := range to {
		if err := g.exchange(tag, to[k], nil, from[k], nil); err != nil {
			return err
		}
	}
	return nil
}

// ---- point to point ----

// MaxTag is the largest tag Send and Recv accept.
const MaxTag = 1<<31 - 1

func checkP2P(g *Group, peer, tag int) error {
	if err := g.checkPeer(peer); err != nil {
		return err
	}
	if tag < 0 || tag > MaxTag {
		return fmt.Errorf("comm: tag %d out of range [0, %d]", tag, MaxTag)
	}
	return nil
}

// Send sends x to rank dst with a tag. It may block until dst receives (large
// messages), so a pair of ranks must not both Send large messages to each
// other before receiving; use SendAsync for that.
func Send[T Number](g *Group, x []T, dst, tag int) error {
	if err := checkP2P(g, dst, tag); err != nil {
		return err
	}
	return g.do("send", tag, func(t uint64) error { return g.links[dst].send(t, asBytes(x)) })
}

// SendAsync is the asynchronous Send. Note that operations of a group run in
// order: a SendAsync queued before a Recv completes before the Recv starts.
func SendAsync[T Number](g *Group, x []T, dst, tag int) *Work {
	if err := checkP2P(g, dst, tag); err != nil {
		return doneWork(err)
	}
	return g.submit("send", tag, func(t uint64) error { return g.links[dst].send(t, asBytes(x)) })
}

// Recv receives into x the next message from rank src with the given tag;
// its length must be len(x). Messages with other tags that arrive first are
// kept for later Recvs.
func Recv[T Number](g *Group, x []T, src, tag int) error {
	if err := checkP2P(g, src, tag); err != nil {
		return err
	}
	return g.do("recv", tag, func(t uint64) error { return g.links[src].recvInto(t, asBytes(x)) })
}

// RecvAsync is the asynchronous Recv.
func RecvAsync[T Number](g *Group, x []T, src, tag int) *Work {
	if err := checkP2P(g, src, tag); err != nil {
		return doneWork(err)
	}
	return g.submit("recv", tag, func(t uint64) error { return g.links[src].recvInto(t, asBytes(x)) })
}
