package pipe

import "fmt"

// Balance cuts a list of layers with the given costs (time, or any
// additive measure) into stages contiguous stages so that the costliest
// stage costs as little as possible (the classic linear partition, by
// dynamic programming), every stage holding at least one layer. It
// returns the stage boundaries: stage s holds layers [cut[s], cut[s+1]).
func Balance(costs []float64, stages int) ([]int, error) {
	n := len(costs)
	if stages < 1 || stages > n {
		return nil, fmt.Errorf("pipe: cannot cut %d layers into %d stages", n, stages)
	}
	prefix := make([]float64, n+1)
	for i, c := range costs {
		if c < 0 {
			return nil, fmt.Errorf("pipe: layer %d has negative cost %g", i, c)
		}
		prefix[i+1] = prefix[i] + c
	}
	// best[k][i]: the least largest stage cost of layers [0, i) in k
	// stages; from[k][i] where the last of them starts.
	inf := prefix[n] + 1
	best := make([][]float64, stages+1)
	from := make([][]int, stages+1)
	for k := range best {
		best[k] = make([]float64, n+1)
		from[k] = make([]int, n+1)
		for i := range best[k] {
			best[k][i] = inf
		}
	}
	best[0][0] = 0
	for k := 1; k <= stages; k++ {
		for i := k; i <= n; i++ {
			for j := k - 1; j < i; j++ {
				if v := max(best[k-1][j], prefix[i]-prefix[j]); v < best[k][i] {
					best[k][i], from[k][i] = v, j
				}
			}
		}
	}
	cut := make([]int, stages+1)
	cut[stages] = n
	for k := stages; k > 0; k-- {
		cut[k-1] = from[k][cut[k]]
	}
	return cut, nil
}

// CutsAt returns the stage boundaries of layers layers cut before each
// layer index in split (the user's split points, ascending).
func CutsAt(layers int, split []int) ([]int, error) {
	cut := []int{0}
	for _, i := range split {
		if i <= cut[len(cut)-1] || i >= layers {
			return nil, fmt.Errorf("pipe: split point %d: want ascending layer indices in (0, %d) that leave every stage a layer", i, layers)
		}
		cut = append(cut, i)
	}
	return append(cut, layers), nil
}
