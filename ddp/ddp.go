package ddp

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/internal/f16"
	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// Options configure New. The zero value gives PyTorch's defaults.
type Options struct {
	// BucketCapMB is the largest size of a gradient bucket in MiB; 0
	// means 25.
	BucketCapMB float64
	// FirstBucketMB is the size of the first bucket (the last layers'
	// gradients, ready first) in MiB; 0 means 1. A small first bucket
	// starts communication early in the backward pass.
	FirstBucketMB float64
	// FindUnusedParameters allows parameters that receive no gradient in a
	// step (their slots are reduced as they are); without it Sync and
	// Prepare return an *UnusedParameterError naming them.
	FindUnusedParameters bool
	// KeepLocalBuffers turns off the broadcast of rank 0's buffers (such as
	// BatchNorm's running statistics) at the end of every Sync, so that
	// each replica keeps the statistics of its own batches. With the
	// broadcast (PyTorch's broadcast_buffers, the default) every replica
	// evaluates with the same buffers.
	KeepLocalBuffers bool
	// SyncBatchNorm makes every BatchNorm of the model normalize with the
	// statistics of the global batch, summed over the ranks in forward
	// and backward (PyTorch's SyncBatchNorm), instead of each rank's own
	// part: what a small per-rank batch needs.
	SyncBatchNorm bool
	// Compression sends float32 gradient buckets as 16-bit floats (Horovod's
	// fp16 compression; bf16 keeps float32's range): half the bytes on the
	// wire, at the price of converting and of 16-bit rounding at every
	// reduction step. For slow links; on shared memory it costs more than
	// it saves. float64 buckets are never compressed.
	Compression Compression
	// ShardOptimizer is ZeRO stage 1 (Rajbhandari et al., "ZeRO", SC 2020):
	// each bucket's gradients are reduce-scattered instead of all-reduced,
	// so that every rank holds the summed gradients of its 1/N of the
	// bucket; a ShardedOptimizer (bound by BindSharded) keeps optimizer
	// state for that part only, updates it, and all-gathers the updated
	// parameters. The Grads of the parameters then hold no reduced sums:
	// only the ShardedOptimizer reads the gradients. float32 parameters
	// only; no Compression. When every rank of the group shares memory
	// (comm.NewWindow), the buckets and the updated parts live in
	// shared-memory windows and both collectives read the peers' memory in
	// place: no messages, no staging copies.
	ShardOptimizer bool
	// Trace keeps the timings of the last Trace steps (Traces): when each
	// bucket's all-reduce was queued, ran and ended against the backward
	// pass. 0 keeps none.
	Trace int
}

// StepTrace is the timing of one step's gradient reduction.
type StepTrace struct {
	// Begin is when Prepare ran (just before Backward), or, without
	// Prepare, when the first gradient was ready; BackwardEnd when the
	// last one was; SyncEnd when Sync returned.
	Begin, BackwardEnd, SyncEnd time.Time
	Buckets                     []BucketTrace // in reduction order
}

// BucketTrace is the timing of one bucket's all-reduce.
type BucketTrace struct {
	Bytes              int
	Launch, Start, End time.Time // queued, started running, finished
}

// Overlap sums, over steps, the time the all-reduces ran (their union per
// step) and the part of it that ran before the backward pass ended,
// hidden behind computation.
func Overlap(steps []StepTrace) (comm, hidden time.Duration) {
	for _, st := range steps {
		var spans [][2]time.Time
		for _, b := range st.Buckets {
			if !b.Start.IsZero() {
				spans = append(spans, [2]time.Time{b.Start, b.End})
			}
		}
		sort.Slice(spans, func(i, j int) bool { return spans[i][0].Before(spans[j][0]) })
		var cur [2]time.Time
		flush := func() {
			if cur[0].IsZero() {
				return
			}
			comm += cur[1].Sub(cur[0])
			if end := minTime(cur[1], st.BackwardEnd); end.After(cur[0]) {
				hidden += end.Sub(cur[0])
			}
		}
		for _, sp := range spans {
			if !cur[0].IsZero() && !sp[0].After(cur[1]) {
				if sp[1].After(cur[1]) {
					cur[1] = sp[1]
				}
				continue
			}
			flush()
			cur = sp
		}
		flush()
	}
	return comm, hidden
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// Traces returns the timings of the last Options.Trace steps, oldest
// first.
func (d *DDP) Traces() []StepTrace {
	out := make([]StepTrace, 0, len(d.traces))
	for i := range d.traces {
		st := d.traces[(d.oldest+i)%len(d.traces)]
		st.Buckets = slices.Clone(st.Buckets)
		out = append(out, st)
	}
	return out
}

// keepTrace stores the step just synced in the ring of the last
// Options.Trace steps, reusing the slots' bucket slices, and readies the
// next step's record: tracing allocates nothing once the ring is full.
func (d *DDP) keepTrace() {
	var slot *StepTrace
	if len(d.traces) < d.opts.Trace {
		d.traces = append(d.traces, StepTrace{})
		slot = &d.traces[len(d.traces)-1]
	} else {
		slot = &d.traces[d.oldest]
		d.oldest = (d.oldest + 1) % len(d.traces)
	}
	buckets := append(slot.Buckets[:0], d.cur.Buckets...)
	*slot = d.cur
	slot.Buckets = buckets
	d.cur = StepTrace{Buckets: d.cur.Buckets[:0]}
}

// Compression is how gradient buckets travel (Options.Compression).
type Compression int

const (
	NoCompression Compression = iota
	FP16                      // IEEE binary16: 11 significant bits, range ±65504
	BF16                      // bfloat16: 8 significant bits, float32's range
)

func (c Compression) String() string {
	switch c {
	case NoCompression:
		return "none"
	case FP16:
		return "fp16"
	case BF16:
		return "bf16"
	}
	return fmt.Sprintf("Compression(%d)", int(c))
}

// ParseCompression parses "none" (or ""), "fp16" and "bf16".
func ParseCompression(s string) (Compression, error) {
	switch strings.ToLower(s) {
	case "", "none":
		return NoCompression, nil
	case "fp16":
		return FP16, nil
	case "bf16":
		return BF16, nil
	}
	return 0, fmt.Errorf("ddp: unknown compression %q (want none, fp16 or bf16)", s)
}

// UnusedParameterError reports parameters that got no gradient in a step
// while Options.FindUnusedParameters was off.
type UnusedParameterError struct {
	Rank  int
	Names []string
}

func (e *UnusedParameterError) Error() string {
	return fmt.Sprintf("ddp: rank %d: parameter %s received no gradient in this step (it does not take part in computing the loss); "+
		"set FindUnusedParameters to allow unused parameters, or freeze them with SetRequiresGrad(false) before ddp.New",
		e.Rank, quoteList(e.Names))
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// DDP synchronizes the gradients of one model replica with the other
// ranks of a group. Its methods are called from the training goroutine
// (the hooks run inside Backward on it); one DDP per model.
type DDP struct {
	g       *comm.Group
	opts    Options
	params  []*param  // trainable parameters in registration order
	buckets []*bucket // bucket 0 holds the last parameters
	buffers []nn.Named
	byT     map[*tensor.Tensor]*param
	removes []func()

	scale  float64 // this rank's weight in the sum
	noSync bool
	next   int // the next bucket to queue this step

	// With ShardOptimizer on a group whose ranks share memory: the
	// gradient buckets live in win, every rank's visible to the others,
	// and the parameter parts in pwin (bound by BindSharded), so the
	// reduce-scatter and the all-gather read the peers' memory in place.
	win, pwin *comm.Window

	onLaunch func(bucket int) // test probe: a bucket's all-reduce was queued
	stats    *statsReducer    // SyncBatchNorm's, nil without it
	cur      StepTrace        // the step being traced (Options.Trace)
	traces   []StepTrace      // a ring of the last steps, oldest at traces[oldest]
	oldest   int
}

// statsReducer sums batch-norm statistics over the group for
// SyncBatchNorm (nn.StatsReducer); a failure is kept for Sync.
type statsReducer struct {
	d   *DDP
	err error
}

func (r *statsReducer) SumStats(x []float64) {
	if r.err != nil {
		return
	}
	if err := comm.AllReduce(r.d.g, x, comm.Sum); err != nil {
		r.err = fmt.Errorf("ddp: SyncBatchNorm statistics: %w", err)
	}
}

func (r *statsReducer) Share() float64 { return r.d.scale }

type param struct {
	name   string
	t      *tensor.Tensor
	view   *tensor.Tensor // the Grad installed: the slot in the bucket
	bucket int
	off, n int
	ready  bool
}

type bucket struct {
	dtype tensor.DType
	f32   []float32
	f64   []float64
	bf    []comm.BFloat16 // the compressed f32, with Options.Compression
	fp    []comm.Float16
	// With ShardOptimizer: this rank's part of the reduced gradients (a
	// view of f32, reduce-scattered in place), its part of the parameters
	// (updated by the ShardedOptimizer), and the parameters' storage as
	// the pieces of the bucket-shaped vector they are all-gathered into.
	shardGrad    []float32
	shardParam   *tensor.Tensor
	gatherPieces [][]float32
	woff, poff   int            // the bucket's offsets in DDP.win and DDP.pwin
	flat         *tensor.Tensor // the buffer as a 1-D tensor, for the scaling kernel
	params       []*param
	pending      int // parameters not ready yet this step
	work         *comm.Work
}

func (b *bucket) len() int { return len(b.f32) + len(b.f64) }

// decompress widens a compressed bucket's reduced sums back into its
// float32 gradients.
func (b *bucket) decompress() {
	switch {
	case b.bf != nil:
		for i, h := range b.bf {
			b.f32[i] = f16.ToFloat32BF16(uint16(h))
		}
	case b.fp != nil:
		for i, h := range b.fp {
			b.f32[i] = f16.ToFloat32FP16(uint16(h))
		}
	}
}

// New broadcasts rank 0's parameters and buffers to every rank of g, lays
// the gradients of model's trainable parameters out in buckets and
// registers the hooks that reduce them. Every rank must call it with the
// same architecture. Parameters must be float32 or float64.
func New(model nn.Module, g *comm.Group, opts Options) (*DDP, error) {
	if model == nil || g == nil {
		return nil, errors.New("ddp: New needs a model and a group")
	}
	if opts.BucketCapMB < 0 || opts.FirstBucketMB < 0 {
		return nil, fmt.Errorf("ddp: bucket sizes must not be negative (BucketCapMB %v, FirstBucketMB %v)", opts.BucketCapMB, opts.FirstBucketMB)
	}
	if opts.BucketCapMB == 0 {
		opts.BucketCapMB = 25
	}
	if opts.ShardOptimizer && opts.Compression != NoCompression {
		return nil, errors.New("ddp: ShardOptimizer does not combine with Compression")
	}
	if opts.FirstBucketMB == 0 {
		opts.FirstBucketMB = 1
	}
	if err := broadcast(g, append(model.NamedParameters(), model.NamedBuffers()...)); err != nil {
		return nil, fmt.Errorf("ddp: broadcasting the start from rank 0: %w", err)
	}
	d := &DDP{g: g, opts: opts, scale: 1 / float64(g.Size()), byT: map[*tensor.Tensor]*param{}, buffers: model.NamedBuffers()}
	for _, nt := range model.NamedParameters() {
		t := nt.Tensor
		if !t.RequiresGrad() {
			continue
		}
		if dt := t.DType(); dt != tensor.Float32 && dt != tensor.Float64 {
			return nil, fmt.Errorf("ddp: parameter %q has dtype %v; gradient buckets hold float32 or float64", nt.Name, dt)
		}
		if opts.ShardOptimizer && t.DType() != tensor.Float32 {
			return nil, fmt.Errorf("ddp: parameter %q has dtype %v; ShardOptimizer shards float32 parameters", nt.Name, t.DType())
		}
		p := &param{name: nt.Name, t: t, n: t.Numel()}
		d.params = append(d.params, p)
		d.byT[t] = p
	}
	d.layout()
	if opts.ShardOptimizer {
		if err := d.shareBuckets(); err != nil {
			return nil, err
		}
	}
	if opts.SyncBatchNorm {
		d.stats = &statsReducer{d: d}
		for _, m := range model.NamedModules() {
			if bn, ok := m.Module.(*nn.BatchNorm); ok {
				bn.Sync = d.stats
			}
		}
	}
	for _, p := range d.params {
		p := p
		d.removes = append(d.removes, p.t.RegisterGradReadyHook(func(*tensor.Tensor) { d.gradReady(p) }))
	}
	return d, nil
}

// layout assigns the parameters to buckets in reverse registration order,
// one open bucket per dtype, closing a bucket once it reaches its size
// limit (FirstBucketMB for the first of a dtype, BucketCapMB after), and
// installs every parameter's Grad as a view of its slot.
func (d *DDP) layout() {
	mib := func(mb float64, dt tensor.DType) int {
		return max(int(mb*(1<<20))/dt.Size(), 1)
	}
	open := map[tensor.DType]*bucket{}
	count := map[tensor.DType]int{}
	var order []*bucket
	for i := len(d.params) - 1; i >= 0; i-- {
		p := d.params[i]
		dt := p.t.DType()
		b := open[dt]
		if b == nil {
			b = &bucket{dtype: dt}
			open[dt] = b
			order = append(order, b)
		}
		p.off = 0
		for _, q := range b.params {
			p.off += q.n
		}
		b.params = append(b.params, p)
		limit := mib(d.opts.BucketCapMB, dt)
		if count[dt] == 0 {
			limit = mib(d.opts.FirstBucketMB, dt)
		}
		if p.off+p.n >= limit {
			open[dt] = nil
			count[dt]++
		}
	}
	d.buckets = order
	for bi, b := range order {
		n := 0
		for _, p := range b.params {
			n += p.n
		}
		if d.opts.ShardOptimizer {
			// Reduce-scatter cuts the bucket into one equal part per rank.
			size := d.g.Size()
			n = (n + size - 1) / size * size
		}
		if b.dtype == tensor.Float32 {
			b.f32 = make([]float32, n)
			b.flat = tensor.FromFloat32(b.f32, n)
		} else {
			b.f64 = make([]float64, n)
			b.flat = tensor.FromFloat64(b.f64, n)
		}
		b.pending = len(b.params)
		for _, p := range b.params {
			p.bucket = bi
			if b.dtype == tensor.Float32 {
				p.view = tensor.FromFloat32(b.f32[p.off:p.off+p.n:p.off+p.n], p.t.Shape()...)
			} else {
				p.view = tensor.FromFloat64(b.f64[p.off:p.off+p.n:p.off+p.n], p.t.Shape()...)
			}
			if old := p.t.Grad(); old != nil {
				p.view.CopyFrom(old)
			}
			p.t.SetGrad(p.view)
		}
	}
}

// shareBuckets moves the float32 gradient buckets into a shared-memory
// window when every rank of the group shares memory (comm.NewWindow), and
// reinstalls the parameters' Grads as views of it. Elsewhere the buckets
// stay in this process's memory.
func (d *DDP) shareBuckets() error {
	total := 0
	for _, b := range d.buckets {
		total += len(b.f32)
	}
	w, err := comm.NewWindow(d.g, total)
	if errors.Is(err, comm.ErrNoWindow) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("ddp: the shared gradient buckets: %w", err)
	}
	d.win = w
	mine, off := w.Part(d.g.Rank()), 0
	for _, b := range d.buckets {
		n := len(b.f32)
		f := mine[off : off+n : off+n]
		copy(f, b.f32)
		b.f32, b.flat, b.woff = f, tensor.FromFloat32(f, n), off
		for _, p := range b.params {
			p.view = tensor.FromFloat32(f[p.off:p.off+p.n:p.off+p.n], p.t.Shape()...)
			p.t.SetGrad(p.view)
		}
		off += n
	}
	return nil
}

// Buckets returns the parameter names of every bucket, in the order the
// buckets are reduced.
func (d *DDP) Buckets() [][]string {
	out := make([][]string, len(d.buckets))
	for i, b := range d.buckets {
		for _, p := range b.params {
			out[i] = append(out[i], p.name)
		}
	}
	return out
}

// SetScale sets the weight of this rank's gradients in the sums of the
// following steps (until changed): 1/WorldSize by default, the average;
// localRows/globalRows to weight ranks by their batch sizes; 0 for a rank
// that ran no backward in the step.
func (d *DDP) SetScale(w float64) { d.scale = w }

// Scale returns the weight SetScale set.
func (d *DDP) Scale() float64 { return d.scale }

// NoSync runs fn with gradient synchronization off: backward passes inside
// fn accumulate gradients locally and Sync does nothing; the next backward
// after it reduces the accumulated sum (gradient accumulation).
func (d *DDP) NoSync(fn func() error) error {
	prev := d.noSync
	d.noSync = true
	defer func() { d.noSync = prev }()
	return fn()
}

// Prepare checks, between the forward pass and loss.Backward, which
// parameters the loss reaches (loss.ReachableLeaves). Unreached ones are
// an *UnusedParameterError, or with FindUnusedParameters they are marked
// ready at once so that their buckets do not wait for Sync. Calling it is
// optional: Sync finds unused parameters too, after the fact.
func (d *DDP) Prepare(loss *tensor.Tensor) error {
	if d.noSync {
		return nil
	}
	if d.opts.Trace > 0 {
		d.cur.Begin = time.Now()
	}
	reached := map[*tensor.Tensor]bool{}
	for _, t := range loss.ReachableLeaves() {
		reached[t] = true
	}
	var unused []*param
	for _, p := range d.params {
		if !reached[p.t] {
			unused = append(unused, p)
		}
	}
	if len(unused) == 0 {
		return nil
	}
	if !d.opts.FindUnusedParameters {
		return d.unusedError(unused)
	}
	for _, p := range unused {
		d.gradReady(p)
	}
	return nil
}

func (d *DDP) unusedError(ps []*param) error {
	e := &UnusedParameterError{Rank: d.g.Rank()}
	for _, p := range ps {
		e.Names = append(e.Names, p.name)
	}
	return e
}

// gradReady marks p's gradient ready for this step and queues the buckets
// that are complete, in order.
func (d *DDP) gradReady(p *param) {
	if d.noSync || p.ready {
		return
	}
	if g := p.t.Grad(); g != p.view {
		// Someone replaced the Grad (SetGrad): take its values back into
		// the bucket and reinstall the view.
		if g != nil {
			p.view.CopyFrom(g)
		} else {
			p.view.Zero()
		}
		p.t.SetGrad(p.view)
	}
	p.ready = true
	if d.opts.Trace > 0 {
		now := time.Now()
		if d.cur.Begin.IsZero() {
			d.cur.Begin = now
		}
		d.cur.BackwardEnd = now
	}
	b := d.buckets[p.bucket]
	b.pending--
	for d.next < len(d.buckets) && d.buckets[d.next].pending == 0 {
		d.launch(d.next)
		d.next++
	}
}

// launch scales bucket i by this rank's weight and queues its all-reduce.
func (d *DDP) launch(i int) {
	b := d.buckets[i]
	var queued time.Time // before the submission: the all-reduce may start at once
	if d.opts.Trace > 0 {
		queued = time.Now()
	}
	switch {
	case d.scale == 0:
		clear(b.f32)
		clear(b.f64)
	case d.scale != 1:
		b.flat.MulScalarInPlace(d.scale)
	}
	switch {
	case d.opts.ShardOptimizer && d.win != nil:
		b.work = nil // Sync sums the peers' buckets in place
	case d.opts.ShardOptimizer:
		b.work = comm.ReduceScatterInPlaceAsync(d.g, b.f32, comm.Sum)
	case b.dtype == tensor.Float32 && d.opts.Compression == BF16:
		if b.bf == nil {
			b.bf = make([]comm.BFloat16, len(b.f32))
		}
		for i, v := range b.f32 {
			b.bf[i] = comm.BFloat16(f16.FromFloat32BF16(v))
		}
		b.work = comm.AllReduceAsync(d.g, b.bf, comm.Sum)
	case b.dtype == tensor.Float32 && d.opts.Compression == FP16:
		if b.fp == nil {
			b.fp = make([]comm.Float16, len(b.f32))
		}
		for i, v := range b.f32 {
			b.fp[i] = comm.Float16(f16.FromFloat32FP16(v))
		}
		b.work = comm.AllReduceAsync(d.g, b.fp, comm.Sum)
	case b.dtype == tensor.Float32:
		b.work = comm.AllReduceAsync(d.g, b.f32, comm.Sum)
	default:
		b.work = comm.AllReduceAsync(d.g, b.f64, comm.Sum)
	}
	if d.onLaunch != nil {
		d.onLaunch(i)
	}
	if d.opts.Trace > 0 {
		if len(d.cur.Buckets) < len(d.buckets) {
			// Every bucket launches every step, overwriting its slot.
			d.cur.Buckets = slices.Grow(d.cur.Buckets[:0], len(d.buckets))[:len(d.buckets)]
		}
		d.cur.Buckets[i] = BucketTrace{Bytes: b.len() * b.dtype.Size(), Launch: queued}
		if b.bf != nil || b.fp != nil {
			d.cur.Buckets[i].Bytes = 2 * b.len()
		}
	}
}

// Sync completes the step's gradient reduction: it queues the buckets
// that did not start during Backward (a rank with weight 0 contributes
// zeros), waits for every all-reduce, and resets for the next step. After
// it every parameter's Grad holds the weighted sum over the ranks. Inside
// NoSync it does nothing. It returns an *UnusedParameterError when a
// parameter got no gradient (unless FindUnusedParameters), after taking
// part in the reduction so that the other ranks are not left waiting.
func (d *DDP) Sync() error {
	if d.noSync {
		return nil
	}
	var unused []*param
	if d.scale != 0 && !d.opts.FindUnusedParameters {
		for _, p := range d.params {
			if !p.ready {
				unused = append(unused, p)
			}
		}
	}
	for ; d.next < len(d.buckets); d.next++ {
		d.launch(d.next)
	}
	var errs []error
	if d.win != nil {
		// Every rank's buckets are complete after the barrier; each sums
		// its part of every bucket from the others' memory. They read until
		// the ShardedOptimizer's barrier, after which the buckets may be
		// cleared.
		start := time.Now()
		if err := d.win.Barrier(); err != nil {
			errs = append(errs, err)
		} else {
			for _, b := range d.buckets {
				d.win.SumChunk(b.woff, len(b.f32))
			}
		}
		if d.opts.Trace > 0 && len(d.cur.Buckets) > 0 {
			d.cur.Buckets[0].Start, d.cur.Buckets[0].End = start, time.Now()
		}
	}
	for i, b := range d.buckets {
		if b.work == nil {
			b.pending = len(b.params)
			continue
		}
		if err := b.work.Wait(); err != nil {
			errs = append(errs, err)
		}
		if d.opts.Trace > 0 && i < len(d.cur.Buckets) {
			d.cur.Buckets[i].Start, d.cur.Buckets[i].End = b.work.Span()
		}
		b.decompress()
		b.work = nil
		b.pending = len(b.params)
	}
	for _, p := range d.params {
		p.ready = false
	}
	d.next = 0
	if d.opts.Trace > 0 {
		d.cur.SyncEnd = time.Now()
		d.keepTrace()
	}
	if d.stats != nil && d.stats.err != nil {
		errs = append(errs, d.stats.err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("ddp: reducing gradients: %w", errors.Join(errs...))
	}
	if len(d.buffers) > 0 && !d.opts.KeepLocalBuffers {
		if err := broadcast(d.g, d.buffers); err != nil {
			return fmt.Errorf("ddp: broadcasting rank 0's buffers: %w", err)
		}
	}
	if len(unused) > 0 {
		return d.unusedError(unused)
	}
	return nil
}

// Close removes the hooks. The Grads stay views of the buckets; shared
// buckets (ZeRO-1 on one host) therefore stay mapped for the life of the
// process.
func (d *DDP) Close() {
	for _, r := range d.removes {
		r()
	}
	d.removes = nil
}

// broadcast overwrites the tensors of entries with rank 0's.
func broadcast(g *comm.Group, entries []nn.Named) error {
	// Check everything before sending anything, so that a rank never
	// stops half-way through the broadcasts the others wait for.
	for _, e := range entries {
		t := e.Tensor
		if dt := t.DType(); dt != tensor.Float32 && dt != tensor.Float64 && dt != tensor.Int64 {
			return fmt.Errorf("cannot broadcast %q of dtype %v (float32, float64 or int64)", e.Name, dt)
		}
		if !t.IsContiguous() {
			return fmt.Errorf("%q is not contiguous", e.Name)
		}
	}
	works := make([]*comm.Work, 0, len(entries))
	for _, e := range entries {
		t := e.Tensor
		switch t.DType() {
		case tensor.Float32:
			works = append(works, comm.BroadcastAsync(g, t.Float32s(), 0))
		case tensor.Float64:
			works = append(works, comm.BroadcastAsync(g, t.Float64s(), 0))
		case tensor.Int64:
			works = append(works, comm.BroadcastAsync(g, t.Int64s(), 0))
		}
	}
	var errs []error
	for _, w := range works {
		if err := w.Wait(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
