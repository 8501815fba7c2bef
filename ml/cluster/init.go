package cluster

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/internal/parallel"
	"github.com/fathom-ml/fathom/ml"
)

// localKMeansIters is the number of Lloyd iterations of the weighted
// k-means++ that ends k-means|| (Spark's LocalKMeans, 30).
const localKMeansIters = 30

// initCenters picks the starting centers by km.InitMode; every rank gets
// the same ones. It returns at most K centers, fewer when the data has
// fewer distinct points.
func (km *KMeans) initCenters(g *group) ([]float64, error) {
	rng := rand.New(rand.NewPCG(uint64(km.Seed), 0x6b6d65616e73)) // "kmeans"
	var c []float64
	var err error
	switch km.InitMode {
	case InitRandom:
		c, err = initRandom(g, km.K, km.Seed)
	case InitKMeansPlusPlus:
		c, err = initPlusPlus(g, km.K, rng)
	default:
		c, err = initParallel(g, km.K, km.InitSteps, km.Seed, rng)
	}
	if err != nil {
		return nil, fmt.Errorf("KMeans: %s initialization: %w", km.InitMode, err)
	}
	return c, nil
}

// rowAt returns global row i (every rank calls it; the rank that holds
// the row contributes it to a sum of zeros).
func (g *group) rowAt(i int) ([]float64, error) {
	v := make([]float64, g.p.d)
	if li := i - g.offset; li >= 0 && li < g.p.n {
		copy(v, g.p.row(li))
	}
	if err := g.c.AllReduce(v, ml.OpSum); err != nil {
		return nil, err
	}
	return v, nil
}

// initRandom takes the K distinct rows whose rowUniform(seed, row) are
// smallest (a uniform sample without replacement of the distinct points,
// the same however the rows are spread): each rank offers its K smallest
// distinct ones, and the offers are merged.
func initRandom(g *group, k int, seed int64) ([]float64, error) {
	p := g.p
	order := make([]int, p.n)
	keys := make([]float64, p.n)
	for i := range order {
		order[i] = i
		keys[i] = rowUniform(seed, g.offset+i)
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(keys[a], keys[b]) })
	var offer []float64
	seen := map[string]bool{}
	for _, i := range order {
		if len(seen) == k {
			break
		}
		s := string(packRows(p.row(i)))
		if seen[s] {
			continue
		}
		seen[s] = true
		offer = append(offer, keys[i])
		offer = append(offer, p.row(i)...)
	}
	all, err := g.c.AllGatherBytes(packRows(offer))
	if err != nil {
		return nil, err
	}
	type cand struct {
		key float64
		row []float64
	}
	var cands []cand
	for _, b := range all {
		v := unpackRows(b)
		for len(v) > 0 {
			cands = append(cands, cand{v[0], v[1 : 1+p.d]})
			v = v[1+p.d:]
		}
	}
	slices.SortStableFunc(cands, func(a, b cand) int { return cmp.Compare(a.key, b.key) })
	var out []float64
	seen = map[string]bool{}
	for _, c := range cands {
		s := string(packRows(c.row))
		if len(seen) == k || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, c.row...)
	}
	return out, nil
}

// costs holds each row's squared distance to the nearest center chosen so
// far.
type costs []float64

// lower lowers each row's cost to its squared distance to the new centers
// c (m × d) where smaller, and returns this rank's total.
func (g *group) lower(cost costs, c []float64, m int) float64 {
	p, d := g.p, g.p.d
	cn := norms(c, m, d)
	return parallel.MapReduce(p.n, block, 0.0, func(lo, hi int) float64 {
		dist := make([]float64, block*m)
		sum := 0.0
		for b := lo; b < hi; b += block {
			e := min(b+block, hi)
			sqDist(p.x[b*d:e*d], p.norm2[b:e], e-b, d, c, cn, m, dist)
			for i := b; i < e; i++ {
				v := cost[i]
				for _, x := range dist[(i-b)*m : (i-b+1)*m] {
					v = min(v, x)
				}
				cost[i] = v
				sum += v
			}
		}
		return sum
	}, func(a, b float64) float64 { return a + b })
}

// sumRanks all-reduces the ranks' cost totals; it returns every rank's total
// (in rank order) and their sum.
func (g *group) sumRanks(local float64) ([]float64, float64, error) {
	v := make([]float64, g.c.Size())
	v[g.c.Rank()] = local
	if err := g.c.AllReduce(v, ml.OpSum); err != nil {
		return nil, 0, err
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return v, s, nil
}

// initPlusPlus is k-means++ (Arthur and Vassilvitskii): the first center a
// uniform row, each next one a row drawn with probability proportional to
// its squared distance to the nearest center so far. It stops early, with
// fewer centers, when every row sits on a center.
func initPlusPlus(g *group, k int, rng *rand.Rand) ([]float64, error) {
	p := g.p
	first, err := g.rowAt(rng.IntN(g.total))
	if err != nil {
		return nil, err
	}
	centers := first
	cost := make(costs, p.n)
	for i := range cost {
		cost[i] = math.Inf(1)
	}
	last := first
	for len(centers)/p.d < k {
		ranks, sum, err := g.sumRanks(g.lower(cost, last, 1))
		if err != nil {
			return nil, err
		}
		if !(sum > 0) {
			break // every row is a center already
		}
		// the draw: rank r holds the row whose cumulative cost (rows in
		// global order) first exceeds target
		target := rng.Float64() * sum
		pick := -1
		before, lastPos := 0.0, 0
		for r, t := range ranks {
			if t > 0 {
				lastPos = r
			}
		}
		for r, t := range ranks {
			if (target < before+t && t > 0) || r == lastPos {
				if r == g.c.Rank() {
					pick = g.offset + g.pickLocal(cost, target-before)
				}
				break
			}
			before += t
		}
		// the picking rank tells the others which row (max of −1s)
		who := []float64{float64(pick)}
		if err := g.c.AllReduce(who, ml.OpMax); err != nil {
			return nil, err
		}
		if last, err = g.rowAt(int(who[0])); err != nil {
			return nil, err
		}
		centers = append(centers, last...)
	}
	return centers, nil
}

// pickLocal returns the local row at which the running sum of cost first
// exceeds target (the last row with a positive cost if rounding leaves it
// short).
func (g *group) pickLocal(cost costs, target float64) int {
	s, lastPos := 0.0, 0
	for i, v := range cost {
		if v > 0 {
			lastPos = i
		}
		s += v
		if s > target && v > 0 {
			return i
		}
	}
	return lastPos
}

// initParallel is k-means|| (Bahmani et al.), as Spark's
// initKMeansParallel: one uniform row, then InitSteps rounds in which each
// row joins the candidates independently with probability 2k·cost/Σcost;
// the candidates are weighted by the rows nearest to them and reduced to
// k centers by a weighted k-means++ and Lloyd on the candidates alone.
func initParallel(g *group, k, steps int, seed int64, rng *rand.Rand) ([]float64, error) {
	p, d := g.p, g.p.d
	first, err := g.rowAt(rng.IntN(g.total))
	if err != nil {
		return nil, err
	}
	cands := slices.Clone(first)
	cost := make(costs, p.n)
	for i := range cost {
		cost[i] = math.Inf(1)
	}
	fresh, m := first, 1
	for step := range steps {
		_, sum, err := g.sumRanks(g.lower(cost, fresh, m))
		if err != nil {
			return nil, err
		}
		if !(sum > 0) {
			break
		}
		var mine []float64
		for i, v := range cost {
			if rowUniform(seed^int64(step+1)<<32, g.offset+i) < 2*float64(k)*v/sum {
				mine = append(mine, p.row(i)...)
			}
		}
		all, err := g.c.AllGatherBytes(packRows(mine))
		if err != nil {
			return nil, err
		}
		fresh = fresh[:0:0]
		for _, b := range all {
			fresh = append(fresh, unpackRows(b)...)
		}
		m = len(fresh) / d
		cands = append(cands, fresh...)
	}
	cands = distinct(cands, d)
	nc := len(cands) / d
	if nc <= k {
		return cands, nil
	}
	// weights: the rows nearest each candidate
	cn := norms(cands, nc, d)
	w := parallel.MapReduce(p.n, block, make([]float64, nc), func(lo, hi int) []float64 {
		acc := make([]float64, nc)
		dist := make([]float64, block*nc)
		for b := lo; b < hi; b += block {
			e := min(b+block, hi)
			sqDist(p.x[b*d:e*d], p.norm2[b:e], e-b, d, cands, cn, nc, dist)
			for i := range e - b {
				j, _, _ := argmin2(dist[i*nc : (i+1)*nc])
				acc[j]++
			}
		}
		return acc
	}, addInto)
	if err := g.c.AllReduce(w, ml.OpSum); err != nil {
		return nil, err
	}
	return localKMeans(cands, w, nc, d, k, rng), nil
}

// distinct drops repeated rows (bit for bit), keeping first occurrences.
func distinct(c []float64, d int) []float64 {
	seen := map[string]bool{}
	out := c[:0:0]
	for i := 0; i < len(c)/d; i++ {
		r := c[i*d : (i+1)*d]
		s := string(packRows(r))
		if !seen[s] {
			seen[s] = true
			out = append(out, r...)
		}
	}
	return out
}

// localKMeans is Spark's LocalKMeans.kMeansPlusPlus: weighted k-means++
// on the n points x (n × d, weights w), then up to localKMeansIters
// weighted Lloyd iterations; a center left with no weight is moved to a
// random point.
func localKMeans(x, w []float64, n, d, k int, rng *rand.Rand) []float64 {
	xn := norms(x, n, d)
	pickWeighted := func(weights []float64) int {
		s := 0.0
		for _, v := range weights {
			s += v
		}
		r, acc := rng.Float64()*s, 0.0
		for i, v := range weights {
			acc += v
			if acc > r && v > 0 {
				return i
			}
		}
		return n - 1
	}
	c := make([]float64, 0, k*d)
	c = append(c, x[pickWeighted(w)*d:][:d]...)
	cost := make([]float64, n)
	dist := make([]float64, n)
	for i := range cost {
		cost[i] = math.Inf(1)
	}
	wc := make([]float64, n)
	for len(c)/d < k {
		last := c[len(c)-d:]
		sqDist(x, xn, n, d, last, norms(last, 1, d), 1, dist)
		for i := range cost {
			cost[i] = min(cost[i], dist[i])
			wc[i] = w[i] * cost[i]
		}
		j := pickWeighted(wc)
		c = append(c, x[j*d:][:d]...)
	}
	dist = make([]float64, n*k)
	assign := make([]int, n)
	for it := 0; it < localKMeansIters; it++ {
		sqDist(x, xn, n, d, c, norms(c, k, d), k, dist)
		changed := false
		for i := range n {
			j, _, _ := argmin2(dist[i*k : (i+1)*k])
			if it == 0 || j != assign[i] {
				changed = true
			}
			assign[i] = j
		}
		if !changed {
			break
		}
		sums := make([]float64, k*d)
		cnt := make([]float64, k)
		for i := range n {
			j := assign[i]
			kernel.AxpyF64(w[i], x[i*d:(i+1)*d], sums[j*d:(j+1)*d])
			cnt[j] += w[i]
		}
		for j := range k {
			if cnt[j] == 0 {
				copy(c[j*d:(j+1)*d], x[rng.IntN(n)*d:][:d])
				continue
			}
			for e := range d {
				c[j*d+e] = sums[j*d+e] / cnt[j]
			}
		}
	}
	return c
}
