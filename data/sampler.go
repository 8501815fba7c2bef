package data

import "fmt"

// Sampler chooses the dataset rows an epoch visits and their order (PyTorch's
// Sampler). Indices must be deterministic: the same epoch gives the same
// indices in every call and every process, so that a resumed run and every
// rank of a data-parallel job agree.
type Sampler interface {
	// Len returns the number of indices of every epoch.
	Len() int
	// Indices returns the dataset rows of epoch, in visiting order (rows may
	// repeat). The caller owns the slice.
	Indices(epoch int) []int
}

// BatchSampler is a Sampler that also cuts each epoch into batches itself,
// as DistributedBatchSampler does. A Loader over a BatchSampler yields
// exactly its batches (possibly short or empty ones) instead of cutting
// Indices into LoaderOptions.BatchSize pieces.
type BatchSampler interface {
	Sampler
	// NumBatches returns the number of batches of every epoch.
	NumBatches() int
	// MaxBatch returns the largest batch size.
	MaxBatch() int
	// Batches returns the rows of each batch of epoch; concatenated, they
	// are Indices(epoch).
	Batches(epoch int) [][]int
}

// SequentialSampler visits rows 0, 1, …, N−1 every epoch.
type SequentialSampler struct {
	N int
}

// Len returns N.
func (s SequentialSampler) Len() int { return max(s.N, 0) }

func (s SequentialSampler) datasetLen() int { return s.N }

// Indices returns 0, 1, …, N−1.
func (s SequentialSampler) Indices(int) []int { return sequence(s.N) }

// RandomSampler visits the N rows in a fresh random order every epoch, drawn
// from Seed and the epoch number alone. It is the order of a Loader with
// Shuffle: true and the same Seed, bit for bit.
type RandomSampler struct {
	N    int
	Seed uint64
}

// Len returns N.
func (s RandomSampler) Len() int { return max(s.N, 0) }

func (s RandomSampler) datasetLen() int { return s.N }

// Indices returns the permutation of epoch.
func (s RandomSampler) Indices(epoch int) []int {
	return Permutation(max(s.N, 0), epochSeed(s.Seed, epoch))
}

// epochOrder is the global order of an epoch: a RandomSampler's when
// shuffling, else sequential.
func epochOrder(n int, shuffle bool, seed uint64, epoch int) []int {
	if shuffle {
		return RandomSampler{N: n, Seed: seed}.Indices(epoch)
	}
	return sequence(n)
}

func sequence(n int) []int {
	p := make([]int, max(n, 0))
	for i := range p {
		p[i] = i
	}
	return p
}

// DistributedOptions configures the distributed samplers. Every rank of a
// job uses the same options but its own Rank.
type DistributedOptions struct {
	// Rank is this process's rank in [0, Ranks).
	Rank int
	// Ranks is the number of processes (≥ 1).
	Ranks int
	// Shuffle draws a fresh global order every epoch from Seed and the epoch
	// (the order of a RandomSampler with that seed); otherwise the global
	// order is 0, 1, …, N−1.
	Shuffle bool
	Seed    uint64
	// DropLast drops the tail that does not divide evenly; see each
	// sampler for what that means.
	DropLast bool
}

func (o DistributedOptions) check(n int) error {
	if n < 0 {
		return fmt.Errorf("sampler: negative dataset size %d", n)
	}
	if o.Ranks < 1 {
		return fmt.Errorf("sampler: Ranks must be at least 1, got %d", o.Ranks)
	}
	if o.Rank < 0 || o.Rank >= o.Ranks {
		return fmt.Errorf("sampler: rank %d is outside [0, %d)", o.Rank, o.Ranks)
	}
	return nil
}

// DistributedSampler gives each rank of a data-parallel job a disjoint share
// of every epoch, with PyTorch's DistributedSampler semantics: all ranks draw
// the same global order from the seed and the epoch, and rank r takes the
// positions r, r+Ranks, r+2·Ranks, … of it, so every rank has the same
// number of indices.
//
// The uneven tail: when N is not a multiple of Ranks, DropLast false pads the
// global order by wrapping around to its start (the first few rows of the
// order are then seen twice in the epoch), giving every rank ⌈N/Ranks⌉
// indices; DropLast true drops the last N mod Ranks rows of the order,
// giving every rank ⌊N/Ranks⌋. With one rank it is a RandomSampler (Shuffle)
// or a SequentialSampler.
type DistributedSampler struct {
	n    int
	opts DistributedOptions
}

// NewDistributedSampler returns rank opts.Rank's sampler over n rows.
func NewDistributedSampler(n int, opts DistributedOptions) (*DistributedSampler, error) {
	if err := opts.check(n); err != nil {
		return nil, err
	}
	return &DistributedSampler{n: n, opts: opts}, nil
}

// Len returns the number of indices per rank and epoch.
func (s *DistributedSampler) Len() int {
	if s.opts.DropLast {
		return s.n / s.opts.Ranks
	}
	return (s.n + s.opts.Ranks - 1) / s.opts.Ranks
}

func (s *DistributedSampler) datasetLen() int { return s.n }

// Indices returns this rank's rows of epoch.
func (s *DistributedSampler) Indices(epoch int) []int {
	global := epochOrder(s.n, s.opts.Shuffle, s.opts.Seed, epoch)
	total := s.Len() * s.opts.Ranks
	if total <= len(global) {
		global = global[:total]
	} else {
		for i := 0; len(global) < total; i++ { // wrap around
			global = append(global, global[i])
		}
	}
	out := make([]int, 0, s.Len())
	for p := s.opts.Rank; p < total; p += s.opts.Ranks {
		out = append(out, global[p])
	}
	return out
}

// DistributedBatchSampler shards an epoch by global batch: the global order
// (as DistributedSampler's) is cut into batches of GlobalBatch rows, and rank
// r takes the r-th of the Ranks equal contiguous parts of every one. Step k
// of every rank then holds a part of the same global batch k, whatever the
// number of ranks, so a data-parallel step that combines the ranks'
// gradients, weighted by their batch sizes, computes the gradient of the
// same global batch as a single process with batch size GlobalBatch.
//
// The uneven tail: a last global batch of m < GlobalBatch rows is dropped
// with DropLast; otherwise it is split into Ranks contiguous parts of sizes
// differing by at most one (rank r takes rows ⌊r·m/Ranks⌋ to
// ⌊(r+1)·m/Ranks⌋ of it), so when m < Ranks some ranks get an empty last
// batch. Every rank has the same number of batches; only their sizes differ
// in the last one. Nothing is padded or repeated, so the union of the ranks'
// indices is exactly the single-process epoch.
type DistributedBatchSampler struct {
	n, global int
	opts      DistributedOptions
}

// NewDistributedBatchSampler returns rank opts.Rank's sampler over n rows
// with global batch size globalBatch, which must be a multiple of
// opts.Ranks.
func NewDistributedBatchSampler(n, globalBatch int, opts DistributedOptions) (*DistributedBatchSampler, error) {
	if err := opts.check(n); err != nil {
		return nil, err
	}
	if globalBatch < 1 || globalBatch%opts.Ranks != 0 {
		return nil, fmt.Errorf("sampler: the global batch size (%d) must be a positive multiple of the number of ranks (%d)", globalBatch, opts.Ranks)
	}
	return &DistributedBatchSampler{n: n, global: globalBatch, opts: opts}, nil
}

// NumBatches returns the number of batches (steps) per epoch, the same on
// every rank.
func (s *DistributedBatchSampler) NumBatches() int {
	if s.opts.DropLast {
		return s.n / s.global
	}
	return (s.n + s.global - 1) / s.global
}

// MaxBatch returns GlobalBatch / Ranks, the size of a full local batch.
func (s *DistributedBatchSampler) MaxBatch() int { return s.global / s.opts.Ranks }

// Len returns the number of indices of this rank per epoch.
func (s *DistributedBatchSampler) Len() int {
	full := s.n / s.global
	n := full * s.MaxBatch()
	if !s.opts.DropLast {
		lo, hi := s.tailPart(s.n - full*s.global)
		n += hi - lo
	}
	return n
}

// tailPart returns this rank's part [lo, hi) of a last batch of m rows.
func (s *DistributedBatchSampler) tailPart(m int) (lo, hi int) {
	r, R := s.opts.Rank, s.opts.Ranks
	return r * m / R, (r + 1) * m / R
}

// Batches returns this rank's batch of every step of epoch.
func (s *DistributedBatchSampler) Batches(epoch int) [][]int {
	global := epochOrder(s.n, s.opts.Shuffle, s.opts.Seed, epoch)
	b, r := s.MaxBatch(), s.opts.Rank
	out := make([][]int, s.NumBatches())
	for k := range out {
		start := k * s.global
		if m := len(global) - start; m < s.global {
			lo, hi := s.tailPart(m)
			out[k] = global[start+lo : start+hi : start+hi]
			continue
		}
		out[k] = global[start+r*b : start+(r+1)*b : start+(r+1)*b]
	}
	return out
}

func (s *DistributedBatchSampler) datasetLen() int { return s.n }

// Indices returns this rank's rows of epoch, batch after batch.
func (s *DistributedBatchSampler) Indices(epoch int) []int {
	out := make([]int, 0, s.Len())
	for _, b := range s.Batches(epoch) {
		out = append(out, b...)
	}
	return out
}
