package dashboard

import "sort"

// stepStore keeps a bounded number of step points. Steps arrive in
// stride-sized buckets, each merged into one point; when the store is full
// neighbouring points merge pairwise and the stride doubles, so a run of
// any length keeps between max/2 and max points spread evenly over it.
type stepStore struct {
	max    int
	points []Step
	stride int  // steps per committed point
	open   Step // the bucket being filled (open.N steps so far)
}

func newStepStore(max int) *stepStore {
	if max < 2 {
		max = 2
	}
	return &stepStore{max: max, stride: 1, points: make([]Step, 0, min(max, 1024))}
}

// add records a step; steps must arrive in increasing Step order.
func (s *stepStore) add(p Step) {
	if p.N < 1 {
		p.N = 1
	}
	if s.open.N == 0 {
		s.open = p
	} else {
		s.open = merge(s.open, p)
	}
	if s.open.N >= s.stride {
		s.commit()
	}
}

// flush commits a partly filled bucket (at the end of a run).
func (s *stepStore) flush() {
	if s.open.N > 0 {
		s.commit()
	}
}

func (s *stepStore) commit() {
	s.points = append(s.points, s.open)
	s.open = Step{}
	if len(s.points) < s.max {
		return
	}
	half := s.points[:0]
	for i := 0; i+1 < len(s.points); i += 2 {
		half = append(half, merge(s.points[i], s.points[i+1]))
	}
	if len(s.points)%2 == 1 {
		half = append(half, s.points[len(s.points)-1])
	}
	s.points = half
	s.stride *= 2
}

// last returns the Step of the latest step recorded (0 before any).
func (s *stepStore) last() int {
	if s.open.N == 0 && len(s.points) > 0 {
		return s.points[len(s.points)-1].Step
	}
	return s.open.Step
}

// after returns the committed points with Step > step.
func (s *stepStore) after(step int) []Step {
	i := sort.Search(len(s.points), func(i int) bool { return s.points[i].Step > step })
	return s.points[i:]
}

// merge returns the point standing for a then b: b's position, the means
// of the measurements weighted by the steps each stands for.
func merge(a, b Step) Step {
	wa, wb := float64(a.N), float64(b.N)
	mean := func(x, y float64) float64 { return (x*wa + y*wb) / (wa + wb) }
	return Step{Step: b.Step, Epoch: b.Epoch, Batch: b.Batch, Batches: b.Batches,
		Loss: mean(a.Loss, b.Loss), LR: mean(a.LR, b.LR), SamplesPerSec: mean(a.SamplesPerSec, b.SamplesPerSec),
		Compute: mean(a.Compute, b.Compute), Comm: mean(a.Comm, b.Comm), Data: mean(a.Data, b.Data),
		T: b.T, N: a.N + b.N}
}
