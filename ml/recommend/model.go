package recommend

import (
	"container/heap"
	"encoding/json"
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/internal/kernel"
	"github.com/fathom-ml/fathom/internal/parallel"
	"github.com/fathom-ml/fathom/ml"
)

// ALSModel is a fitted ALS: a factor of Rank values for every user and
// item seen in the ratings. Its prediction for (u, i) is x_u·y_i; an
// unseen user or item is a cold start (see ColdStartStrategy).
type ALSModel struct {
	// Rank, the columns, ColdStartStrategy and BlockSize are the
	// estimator's (see ALS).
	Rank              int    `json:"rank"`
	UserCol           string `json:"userCol"`
	ItemCol           string `json:"itemCol"`
	PredictionCol     string `json:"predictionCol"`
	ColdStartStrategy string `json:"coldStartStrategy"`
	BlockSize         int    `json:"blockSize"`
	// UserIDs are the users, increasing; UserFactors their factors
	// (len(UserIDs) × Rank, row-major). Items likewise.
	UserIDs     []int32   `json:"-"`
	UserFactors []float64 `json:"-"`
	ItemIDs     []int32   `json:"-"`
	ItemFactors []float64 `json:"-"`
	// Stats are the fit's timings and traffic on this rank (not saved).
	Stats FitStats `json:"-"`

	users, items *idIndex
}

// Type returns "ALSModel".
func (m *ALSModel) Type() string { return "ALSModel" }

// Encode returns the settings and the ids and factors of both sides.
func (m *ALSModel) Encode() (ml.Encoded, error) {
	ids := func(v []int32) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x)
		}
		return out
	}
	return ml.Encoded{Params: m, Arrays: map[string]ml.Array{
		"userIds":     ml.Vec(ids(m.UserIDs)),
		"userFactors": ml.Mat(len(m.UserIDs), m.Rank, m.UserFactors),
		"itemIds":     ml.Vec(ids(m.ItemIDs)),
		"itemFactors": ml.Mat(len(m.ItemIDs), m.Rank, m.ItemFactors),
	}}, nil
}

func decodeModel(raw json.RawMessage, arrays map[string]ml.Array) (ml.Model, error) {
	m := &ALSModel{}
	if err := ml.DecodeParams(raw, m); err != nil {
		return nil, err
	}
	if m.Rank < 1 || m.BlockSize < 1 || (m.ColdStartStrategy != "nan" && m.ColdStartStrategy != "drop") {
		return nil, fmt.Errorf("bad params: rank %d, blockSize %d, coldStartStrategy %q", m.Rank, m.BlockSize, m.ColdStartStrategy)
	}
	side := func(name string) ([]int32, []float64, error) {
		a, err := ml.Need(arrays, name+"Ids", -1)
		if err != nil {
			return nil, nil, err
		}
		f, err := ml.Need(arrays, name+"Factors", a.Shape[0], m.Rank)
		if err != nil {
			return nil, nil, err
		}
		ids := make([]int32, len(a.Data))
		for i, v := range a.Data {
			if v != math.Trunc(v) || v < math.MinInt32 || v > math.MaxInt32 || (i > 0 && int32(v) <= ids[i-1]) {
				return nil, nil, fmt.Errorf("array %sIds: entry %d (%g) is not an increasing int32 id", name, i, v)
			}
			ids[i] = int32(v)
		}
		return ids, f.Data, nil
	}
	var err error
	if m.UserIDs, m.UserFactors, err = side("user"); err != nil {
		return nil, err
	}
	if m.ItemIDs, m.ItemFactors, err = side("item"); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *ALSModel) index() (users, items *idIndex) {
	if m.users == nil {
		m.users = newIDIndex(m.UserIDs)
	}
	if m.items == nil {
		m.items = newIDIndex(m.ItemIDs)
	}
	return m.users, m.items
}

// UserFactor returns user id's factor, or nil if the model has not seen
// the user.
func (m *ALSModel) UserFactor(id int32) []float64 {
	u, _ := m.index()
	x := u.lookup(id)
	if x < 0 {
		return nil
	}
	return m.UserFactors[int(x)*m.Rank : int(x+1)*m.Rank]
}

// ItemFactor returns item id's factor, or nil.
func (m *ALSModel) ItemFactor(id int32) []float64 {
	_, it := m.index()
	x := it.lookup(id)
	if x < 0 {
		return nil
	}
	return m.ItemFactors[int(x)*m.Rank : int(x+1)*m.Rank]
}

// Predict returns x_u·y_i for each (users[t], items[t]): NaN where the
// user or item is unknown.
func (m *ALSModel) Predict(users, items []int32) []float64 {
	ui, ii := m.index()
	k := m.Rank
	out := make([]float64, len(users))
	parallel.For(len(users), 1<<14, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			u, i := ui.lookup(users[t]), ii.lookup(items[t])
			if u < 0 || i < 0 {
				out[t] = math.NaN()
				continue
			}
			x := m.UserFactors[int(u)*k : int(u)*k+k]
			y := m.ItemFactors[int(i)*k : int(i)*k+k]
			s := 0.0
			for j, v := range x {
				s += v * y[j]
			}
			out[t] = s
		}
	})
	return out
}

// RMSE returns the root-mean-square error of the model's predictions
// over r's ratings whose user and item it knows, and how many were cold
// (left out).
func (m *ALSModel) RMSE(r *Ratings) (rmse float64, cold int) {
	p := m.Predict(r.User, r.Item)
	se, n := 0.0, 0
	for t, v := range p {
		if math.IsNaN(v) {
			cold++
			continue
		}
		d := v - float64(r.Rating[t])
		se += d * d
		n++
	}
	if n == 0 {
		return math.NaN(), cold
	}
	return math.Sqrt(se / float64(n)), cold
}

// Transform adds the prediction column for the frame's user and item
// columns; with coldStartStrategy "drop" the rows of unknown users or
// items are dropped, with "nan" they are predicted NaN.
func (m *ALSModel) Transform(f *data.Frame) (*data.Frame, error) {
	if f.Has(m.PredictionCol) {
		return nil, fmt.Errorf("ALSModel: the frame already has a column %q", m.PredictionCol)
	}
	ids, err := frameIDs(f, m.UserCol, m.ItemCol)
	if err != nil {
		return nil, fmt.Errorf("ALSModel: %w", err)
	}
	p := m.Predict(ids.User, ids.Item)
	if m.ColdStartStrategy == "drop" {
		keep := make([]int, 0, len(p))
		for t, v := range p {
			if !math.IsNaN(v) {
				keep = append(keep, t)
			}
		}
		if len(keep) < len(p) {
			f = f.Take(keep)
			q := make([]float64, len(keep))
			for j, t := range keep {
				q[j] = p[t]
			}
			p = q
		}
	}
	return ml.WithColumns(f, ml.ScalarOut(m.PredictionCol, p))
}

// frameIDs reads two id columns (the rating is not needed).
func frameIDs(f *data.Frame, userCol, itemCol string) (*Ratings, error) {
	g, err := f.Select(userCol, itemCol)
	if err != nil {
		return nil, err
	}
	g, err = g.With(data.NewColumn("\x00rating", make([]float32, f.Len()), nil))
	if err != nil {
		return nil, err
	}
	return FrameRatings(g, userCol, itemCol, "\x00rating", "")
}

// Recommendations are the top K of the other side for each of IDs:
// Items[t*K : (t+1)*K] (ids, best first) with Scores likewise.
type Recommendations struct {
	// IDs are the users (items) recommended for, K the number of
	// recommendations each.
	IDs    []int32
	K      int
	Items  []int32
	Scores []float64
}

// RecommendForAllUsers returns each user's k items of highest predicted
// rating (k is capped at the number of items; ties go to the smaller id).
func (m *ALSModel) RecommendForAllUsers(k int) (*Recommendations, error) {
	return recommend(m.UserIDs, m.UserFactors, m.ItemIDs, m.ItemFactors, m.Rank, k, m.BlockSize)
}

// RecommendForAllItems returns each item's k users of highest predicted
// rating.
func (m *ALSModel) RecommendForAllItems(k int) (*Recommendations, error) {
	return recommend(m.ItemIDs, m.ItemFactors, m.UserIDs, m.UserFactors, m.Rank, k, m.BlockSize)
}

// recommend scores blocks of `block` rows of x against all of y with one
// GEMM each and keeps every row's top k.
func recommend(xids []int32, x []float64, yids []int32, y []float64, rank, k, block int) (*Recommendations, error) {
	if k < 1 {
		return nil, fmt.Errorf("ALSModel: k must be ≥ 1, got %d", k)
	}
	k = min(k, len(yids))
	n, ny := len(xids), len(yids)
	out := &Recommendations{IDs: xids, K: k, Items: make([]int32, n*k), Scores: make([]float64, n*k)}
	if k == 0 || n == 0 {
		return out, nil
	}
	// Keep a block's scores within ~32 MiB.
	block = max(1, min(block, (4<<20)/max(ny, 1)))
	nb := (n + block - 1) / block
	parallel.For(nb, 1, func(lo, hi int) {
		s := make([]float64, block*ny)
		h := &topK{}
		for b := lo; b < hi; b++ {
			r0, r1 := b*block, min(n, (b+1)*block)
			rows := r1 - r0
			kernel.Dgemm(false, true, rows, ny, rank, 1, x[r0*rank:r1*rank], rank, y, rank, 0, s, ny)
			for r := range rows {
				h.reset(k)
				for j, v := range s[r*ny : (r+1)*ny] {
					h.offer(v, int32(j))
				}
				o := (r0 + r) * k
				for q := k - 1; q >= 0; q-- {
					e := heap.Pop(h).(scored)
					out.Items[o+q], out.Scores[o+q] = yids[e.j], e.v
				}
			}
		}
	})
	return out, nil
}

type scored struct {
	v float64
	j int32
}

// topK is a min-heap of the best k (the root is the worst kept: lowest
// score, then highest index).
type topK struct {
	e []scored
	k int
}

func (h *topK) reset(k int)        { h.e, h.k = h.e[:0], k }
func (h *topK) Len() int           { return len(h.e) }
func (h *topK) Less(a, b int) bool { return worse(h.e[a], h.e[b]) }
func (h *topK) Swap(a, b int)      { h.e[a], h.e[b] = h.e[b], h.e[a] }
func (h *topK) Push(x any)         { h.e = append(h.e, x.(scored)) }
func (h *topK) Pop() any {
	x := h.e[len(h.e)-1]
	h.e = h.e[:len(h.e)-1]
	return x
}

func worse(a, b scored) bool { return a.v < b.v || (a.v == b.v && a.j > b.j) }

func (h *topK) offer(v float64, j int32) {
	s := scored{v, j}
	if len(h.e) < h.k {
		heap.Push(h, s)
		return
	}
	if worse(h.e[0], s) {
		h.e[0] = s
		heap.Fix(h, 0)
	}
}

// Frame returns the recommendations as a frame: the id column idCol
// (int64) and two vector columns of width K, "recommendations" (the
// recommended ids) and "ratings" (their predicted ratings).
func (r *Recommendations) Frame(idCol string) (*data.Frame, error) {
	ids := make([]int64, len(r.IDs))
	for i, v := range r.IDs {
		ids[i] = int64(v)
	}
	items := make([]float64, len(r.Items))
	for i, v := range r.Items {
		items[i] = float64(v)
	}
	return data.NewFrame(data.NewColumn(idCol, ids, nil),
		data.NewVectorColumn("recommendations", r.K, items, nil, nil),
		data.NewVectorColumn("ratings", r.K, r.Scores, nil, nil))
}
