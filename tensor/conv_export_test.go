package tensor

// ConvTuning holds the knobs that choose how Conv2d splits its work.
type ConvTuning struct {
	ColumnBudget int // elements of one chunk's column matrix (chunked mode)
	SmallFlops   int // per-image GEMM size below which images run one per task
	ImageGrain   int // least column elements per task in the per-image mode
}

// SetConvTuning replaces the tuning knobs and returns the previous ones,
// so tests can drive every path of Conv2d.
func SetConvTuning(t ConvTuning) ConvTuning {
	old := ConvTuning{convColumnBudget, convSmallFlops, convImageGrain}
	convColumnBudget, convSmallFlops, convImageGrain = t.ColumnBudget, t.SmallFlops, t.ImageGrain
	return old
}

// SetConvColumnBudget sets only the column budget and returns the old one.
func SetConvColumnBudget(n int) int {
	old := convColumnBudget
	convColumnBudget = n
	return old
}
