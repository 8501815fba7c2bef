package bench

import (
	"fmt"
	"runtime"
	"syscall"
	"time"

	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/recommend"
)

// ALSResult is the line of `fathom bench als --json`.
type ALSResult struct {
	Data                string  `json:"data"`
	Users               int     `json:"n_users"`
	Items               int     `json:"n_items"`
	Ratings             int     `json:"n_ratings"`
	Train               int     `json:"n_train"`
	Rank                int     `json:"rank"`
	Lambda              float64 `json:"lambda"`
	Iters               int     `json:"iters"`
	Threads             int     `json:"threads"`
	LoadSeconds         float64 `json:"load_seconds"`
	PrepSeconds         float64 `json:"prep_seconds"`
	SecondsPerIteration float64 `json:"seconds_per_iteration"`
	TotalSeconds        float64 `json:"total_seconds"`
	WallSeconds         float64 `json:"wall_seconds"`
	TrainRMSE           float64 `json:"train_rmse,omitempty"`
	TestRMSE            float64 `json:"test_rmse"`
	ColdTestRows        int     `json:"cold_test_rows"`
	PeakRSSBytes        int64   `json:"peak_rss_bytes"`
	// Under `fathom run -n N`: the ranks, and rank 0's traffic.
	Ranks                     int   `json:"ranks"`
	FactorBytes               int64 `json:"factor_bytes"`
	SentBytesPerIteration     int64 `json:"sent_bytes_per_iteration,omitempty"`
	ReceivedBytesPerIteration int64 `json:"received_bytes_per_iteration,omitempty"`
	ShuffleBytes              int64 `json:"shuffle_bytes,omitempty"`
}

// ALS reads the ratings file at path (gen_ratings.py's binary form,
// memory-mapped), fits e on its training rows — under a group of c.Size()
// ranks each rank on its contiguous share — and scores the test rows (and
// the training rows when trainRMSE). Every rank returns its own result;
// `fathom bench als` prints rank 0's.
func ALS(path string, e *recommend.ALS, c ml.Comm, trainRMSE bool) (ALSResult, error) {
	start := time.Now()
	bf, err := recommend.ReadBinary(path)
	if err != nil {
		return ALSResult{}, fmt.Errorf("bench als: %w", err)
	}
	defer bf.Close()
	res := ALSResult{Data: path, Users: bf.Users, Items: bf.Items, Ratings: bf.All.Len(), Train: bf.Train,
		Rank: e.Rank, Lambda: e.RegParam, Iters: e.MaxIter, Threads: runtime.GOMAXPROCS(0),
		LoadSeconds: time.Since(start).Seconds()}
	train := bf.TrainSet()
	if n := c.Size(); n > 1 {
		train = train.Slice(train.Len()*c.Rank()/n, train.Len()*(c.Rank()+1)/n)
	}
	res.Ranks = c.Size()
	t := time.Now()
	m, err := e.FitRatings(train, c)
	if err != nil {
		return res, fmt.Errorf("bench als: %w", err)
	}
	res.FactorBytes = m.Stats.FactorBytes
	res.SentBytesPerIteration, res.ReceivedBytesPerIteration = m.Stats.SentBytesPerIter, m.Stats.ReceivedBytesPerIter
	res.ShuffleBytes = m.Stats.ShuffleBytes
	res.TotalSeconds = time.Since(t).Seconds()
	res.PrepSeconds = m.Stats.PrepSeconds
	if len(m.Stats.IterSeconds) > 0 {
		res.SecondsPerIteration = median(m.Stats.IterSeconds)
	}
	res.TestRMSE, res.ColdTestRows = m.RMSE(bf.TestSet())
	if trainRMSE {
		res.TrainRMSE, _ = m.RMSE(bf.TrainSet())
	}
	res.WallSeconds = time.Since(start).Seconds()
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		res.PeakRSSBytes = ru.Maxrss * 1024 // Linux reports KiB
	}
	return res, nil
}
