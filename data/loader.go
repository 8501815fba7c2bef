package data

import (
	"fmt"
	"iter"
	"sync"
)

// LoaderOptions configures a Loader.
type LoaderOptions struct {
	// BatchSize is the number of examples per batch (≥ 1).
	BatchSize int
	// Shuffle draws a fresh random order of the examples every epoch. The
	// order of epoch e depends only on Seed and e, so a run is reproducible
	// and a resumed run sees the same batches as an uninterrupted one.
	Shuffle bool
	Seed    uint64
	// DropLast drops the last batch of an epoch when it has fewer than
	// BatchSize examples.
	DropLast bool
	// Prefetch is how many batches a background goroutine prepares ahead
	// of the consumer. 0 means 2; a negative value gathers each batch in
	// the consuming goroutine (no background goroutine).
	Prefetch int
	// Sampler, if set, chooses the rows of every epoch and their order
	// (Shuffle and Seed must then be unset): a RandomSampler reproduces
	// Shuffle, a DistributedSampler gives each rank its share. Its indices
	// are cut into batches of BatchSize, unless it is a BatchSampler, whose
	// own batches the loader yields (BatchSize may then be 0, meaning the
	// sampler's MaxBatch, and DropLast must be false). Nil keeps the
	// behaviour of Shuffle and Seed.
	Sampler Sampler
}

// Loader cuts a Dataset into mini-batches, epoch after epoch (PyTorch's
// DataLoader over an in-memory map-style dataset).
//
//	loader, err := data.NewLoader(ds, data.LoaderOptions{BatchSize: 64, Shuffle: true, Seed: 1})
//	for epoch := range epochs {
//		for step, b := range loader.Epoch(epoch) {
//			// b.X, b.Labels: this step's batch, valid until the next iteration
//		}
//	}
//
// With prefetching on, one goroutine per running epoch gathers the next
// batches into a bounded set of reused buffers while the loop computes.
// Leaving the loop early (break, return, panic) stops and joins that
// goroutine before the range statement finishes, so nothing leaks.
//
// A Loader may run several epochs at once (each has its own buffers); its
// methods are safe for concurrent use.
type Loader struct {
	ds   *Dataset
	opts LoaderOptions

	mu   sync.Mutex
	idle []*Batch // idle full-size batch buffers, reused across epochs
}

// NewLoader returns a loader over ds.
func NewLoader(ds *Dataset, opts LoaderOptions) (*Loader, error) {
	if ds == nil {
		return nil, fmt.Errorf("loader: nil dataset")
	}
	if bs, ok := opts.Sampler.(BatchSampler); ok {
		if opts.BatchSize == 0 {
			opts.BatchSize = max(bs.MaxBatch(), 1)
		}
		if opts.BatchSize < bs.MaxBatch() {
			return nil, fmt.Errorf("loader: batch size %d is smaller than the sampler's batches (%d)", opts.BatchSize, bs.MaxBatch())
		}
		if opts.DropLast {
			return nil, fmt.Errorf("loader: DropLast with a BatchSampler: set it on the sampler")
		}
	}
	if opts.BatchSize < 1 {
		return nil, fmt.Errorf("loader: batch size must be at least 1, got %d", opts.BatchSize)
	}
	if opts.Sampler != nil && (opts.Shuffle || opts.Seed != 0) {
		return nil, fmt.Errorf("loader: Shuffle and Seed are the sampler's job when a Sampler is set")
	}
	if s, ok := opts.Sampler.(interface{ datasetLen() int }); ok && s.datasetLen() != ds.Len() {
		return nil, fmt.Errorf("loader: the sampler draws from %d rows, the dataset has %d", s.datasetLen(), ds.Len())
	}
	if opts.Prefetch == 0 {
		opts.Prefetch = 2
	}
	return &Loader{ds: ds, opts: opts}, nil
}

// Dataset returns the dataset the loader reads.
func (l *Loader) Dataset() *Dataset { return l.ds }

// Options returns the loader's options (with defaults filled in).
func (l *Loader) Options() LoaderOptions { return l.opts }

// Len returns the number of batches in one epoch.
func (l *Loader) Len() int {
	if bs, ok := l.opts.Sampler.(BatchSampler); ok {
		return bs.NumBatches()
	}
	n, b := l.epochLen(), l.opts.BatchSize
	if l.opts.DropLast {
		return n / b
	}
	return (n + b - 1) / b
}

// Samples returns the number of examples in one epoch (fewer than
// Dataset().Len() when DropLast drops a short batch).
func (l *Loader) Samples() int {
	if _, ok := l.opts.Sampler.(BatchSampler); ok {
		return l.opts.Sampler.Len()
	}
	if l.opts.DropLast {
		return l.Len() * l.opts.BatchSize
	}
	return l.epochLen()
}

// epochLen returns the number of rows an epoch visits before DropLast.
func (l *Loader) epochLen() int {
	if l.opts.Sampler != nil {
		return l.opts.Sampler.Len()
	}
	return l.ds.Len()
}

// Order returns the order in which epoch e visits the dataset's rows: the
// sampler's indices when there is one, else a permutation drawn from
// (Seed, e) when shuffling, else 0, 1, 2, ... It panics if a sampler
// returns a row outside the dataset, a programming error.
func (l *Loader) Order(epoch int) []int {
	n := l.ds.Len()
	if l.opts.Sampler != nil {
		order := l.opts.Sampler.Indices(epoch)
		for _, i := range order {
			if i < 0 || i >= n {
				panic(fmt.Sprintf("loader: the sampler returned row %d of a dataset of %d rows", i, n))
			}
		}
		return order
	}
	if !l.opts.Shuffle {
		p := make([]int, n)
		for i := range p {
			p[i] = i
		}
		return p
	}
	return Permutation(n, epochSeed(l.opts.Seed, epoch))
}

// epochSeed mixes the loader seed and the epoch number with SplitMix64's
// finalizer (Steele, Lea and Flood, "Fast Splittable Pseudorandom Number
// Generators", OOPSLA 2014), so neighbouring epochs get unrelated streams.
func epochSeed(seed uint64, epoch int) uint64 {
	z := seed + uint64(epoch+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Epoch returns the batches of epoch e with their step index (0-based).
func (l *Loader) Epoch(epoch int) iter.Seq2[int, *Batch] {
	return l.EpochFrom(epoch, 0)
}

// EpochFrom is Epoch starting at batch start, for resuming an epoch from a
// checkpoint: it yields the same batches an uninterrupted epoch yields
// from that step on.
func (l *Loader) EpochFrom(epoch, start int) iter.Seq2[int, *Batch] {
	return func(yield func(int, *Batch) bool) {
		nb := l.Len()
		if start >= nb {
			return
		}
		start = max(start, 0)
		eb := l.batches(epoch)
		if l.opts.Prefetch < 0 {
			b := l.get()
			defer l.put(b)
			for k := start; k < nb; k++ {
				l.ds.Gather(eb.rows(k), b)
				if !yield(k, b) {
					return
				}
			}
			return
		}
		l.prefetch(eb, start, nb, yield)
	}
}

// epochBatches gives the dataset rows of each batch of an epoch: slices of
// order BatchSize long, or a BatchSampler's batches. A value type rather than
// a closure, so that an epoch allocates no more than it did before samplers.
type epochBatches struct {
	order   []int
	size    int
	batches [][]int
}

// rows returns the dataset rows of batch k.
func (e epochBatches) rows(k int) []int {
	if e.batches != nil {
		return e.batches[k]
	}
	return e.order[k*e.size : min((k+1)*e.size, len(e.order))]
}

// batches returns the batches of epoch.
func (l *Loader) batches(epoch int) epochBatches {
	if bs, ok := l.opts.Sampler.(BatchSampler); ok {
		batches := bs.Batches(epoch)
		if len(batches) != l.Len() {
			panic(fmt.Sprintf("loader: the sampler returned %d batches, NumBatches says %d", len(batches), l.Len()))
		}
		n := l.ds.Len()
		for _, b := range batches {
			if len(b) > l.opts.BatchSize {
				panic(fmt.Sprintf("loader: the sampler returned a batch of %d rows, more than its MaxBatch %d", len(b), l.opts.BatchSize))
			}
			for _, i := range b {
				if i < 0 || i >= n {
					panic(fmt.Sprintf("loader: the sampler returned row %d of a dataset of %d rows", i, n))
				}
			}
		}
		if batches == nil {
			batches = [][]int{}
		}
		return epochBatches{batches: batches}
	}
	return epochBatches{order: l.Order(epoch), size: l.opts.BatchSize}
}

// prefetch runs a producer goroutine that fills free buffers and hands
// them over a channel of capacity Prefetch. Buffers cycle: producer fills
// one, the channel holds up to Prefetch, the consumer holds one, and one
// more lets the producer start the next batch while the channel is full of
// ready ones, so Prefetch+2 buffers suffice and no send ever waits on
// a buffer the consumer still reads.
func (l *Loader) prefetch(eb epochBatches, start, nb int, yield func(int, *Batch) bool) {
	nbuf := l.opts.Prefetch + 2
	free := make(chan *Batch, nbuf)
	for range nbuf {
		free <- l.get()
	}
	type item struct {
		k int
		b *Batch
	}
	ready := make(chan item, l.opts.Prefetch)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(ready)
		for k := start; k < nb; k++ {
			var b *Batch
			select {
			case b = <-free:
			case <-stop:
				return
			}
			l.ds.Gather(eb.rows(k), b)
			select {
			case ready <- item{k, b}:
			case <-stop:
				free <- b
				return
			}
		}
	}()
	defer func() {
		close(stop)
		<-done
		// Every buffer is now either in free or still in ready.
		for it := range ready {
			free <- it.b
		}
		close(free)
		for b := range free {
			l.put(b)
		}
	}()
	for it := range ready {
		if !yield(it.k, it.b) {
			free <- it.b
			return
		}
		free <- it.b
	}
}

// get takes an idle full-size buffer or makes one.
func (l *Loader) get() *Batch {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.idle); n > 0 {
		b := l.idle[n-1]
		l.idle = l.idle[:n-1]
		return b
	}
	return l.ds.NewBatch(l.opts.BatchSize)
}

// put returns a buffer to the idle buffers.
func (l *Loader) put(b *Batch) {
	l.mu.Lock()
	l.idle = append(l.idle, b)
	l.mu.Unlock()
}
