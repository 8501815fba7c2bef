package recommend

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/mltest"
)

// tinyRatings is a small random rating set with sparse, negative and
// unordered ids: nu users, ni items, each pair rated with probability p,
// ratings in minR..5 (some ≤ 0 when minR ≤ 0).
func tinyRatings(seed uint64, nu, ni int, p float64, minR int) *Ratings {
	rng := rand.New(rand.NewPCG(seed, 99))
	r := &Ratings{}
	for _, u := range rng.Perm(nu) {
		for i := range ni {
			if rng.Float64() < p {
				r.User = append(r.User, int32(7*u-20))
				r.Item = append(r.Item, int32(1000+3*i))
				r.Rating = append(r.Rating, float32(minR+rng.IntN(6-minR)))
			}
		}
	}
	return r
}

func ratingsFrame(t testing.TB, r *Ratings) *data.Frame {
	u := make([]int64, r.Len())
	i := make([]int64, r.Len())
	v := make([]float64, r.Len())
	for t := range u {
		u[t], i[t], v[t] = int64(r.User[t]), int64(r.Item[t]), float64(r.Rating[t])
	}
	f, err := data.NewFrame(data.NewColumn("user", u, nil), data.NewColumn("item", i, nil), data.NewColumn("rating", v, nil))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// checkSystem checks that x solves (A + reg·I) x = b to working precision.
func checkSystem(t *testing.T, what string, a [][]float64, b []float64, reg float64, x []float64) {
	t.Helper()
	k := len(b)
	scale := 0.0
	for p := range k {
		scale = max(scale, math.Abs(b[p]))
		for c := range k {
			scale = max(scale, math.Abs(a[p][c]*x[c]))
		}
	}
	for p := range k {
		s := -b[p] + reg*x[p]
		for c := range k {
			s += a[p][c] * x[c]
		}
		if math.Abs(s) > 1e-10*max(scale, 1) {
			t.Fatalf("%s: residual %g in row %d of the normal equations (scale %g)", what, s, p, scale)
		}
	}
}

func outerAdd(a [][]float64, w float64, y []float64) {
	for p := range y {
		for c := range y {
			a[p][c] += w * y[p] * y[c]
		}
	}
}

func zeroSystem(k int) ([][]float64, []float64) {
	a := make([][]float64, k)
	for p := range a {
		a[p] = make([]float64, k)
	}
	return a, make([]float64, k)
}

// TestExplicitNormalEquations checks ALS-WR's update directly: after one
// iteration every user factor solves its ridge system built from the
// initial item factors, and every item factor its system built from the
// new user factors, with λ scaled by the number of ratings.
func TestExplicitNormalEquations(t *testing.T) {
	r := tinyRatings(1, 30, 20, 0.3, 1)
	for _, asm := range []bool{false, true} {
		if asm && !haveAsm {
			continue
		}
		func() {
			defer func(v bool) { useAsm = v }(useAsm)
			useAsm = asm
			e := NewALS()
			e.Rank, e.MaxIter, e.RegParam, e.Seed = 4, 1, 0.3, 7
			m, err := e.FitRatings(r, nil)
			if err != nil {
				t.Fatal(err)
			}
			k := e.Rank
			v0 := func(id int32) []float64 {
				f := make([]float64, k)
				initFactor(f, e.Seed, sideItem, id, false)
				return f
			}
			for _, id := range m.UserIDs {
				a, b := zeroSystem(k)
				n := 0
				for t := range r.Rating {
					if r.User[t] == id {
						y := v0(r.Item[t])
						outerAdd(a, 1, y)
						for p := range y {
							b[p] += float64(r.Rating[t]) * y[p]
						}
						n++
					}
				}
				checkSystem(t, "user", a, b, e.RegParam*float64(n), m.UserFactor(id))
			}
			for _, id := range m.ItemIDs {
				a, b := zeroSystem(k)
				n := 0
				for t := range r.Rating {
					if r.Item[t] == id {
						x := m.UserFactor(r.User[t])
						outerAdd(a, 1, x)
						for p := range x {
							b[p] += float64(r.Rating[t]) * x[p]
						}
						n++
					}
				}
				checkSystem(t, "item", a, b, e.RegParam*float64(n), m.ItemFactor(id))
			}
		}()
	}
}

// TestImplicitDenseFormula checks the implicit update against Hu, Koren
// and Volinsky's dense formula over every item: (Σ_i c_ui y_i y_iᵀ +
// λ n⁺_u I) x_u = Σ_i c_ui p_ui y_i, c_ui = 1 + α|r_ui| (1 where unrated),
// p_ui = [r_ui > 0] — MLlib's extension to ratings ≤ 0.
func TestImplicitDenseFormula(t *testing.T) {
	r := tinyRatings(2, 25, 15, 0.35, -2)
	e := NewALS()
	e.Rank, e.MaxIter, e.RegParam, e.ImplicitPrefs, e.Alpha = 3, 3, 0.05, true, 2.5
	m, err := e.FitRatings(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	k := e.Rank
	// The items are solved last, from the final user factors.
	for _, iid := range m.ItemIDs {
		a, b := zeroSystem(k)
		rated := map[int32]float64{}
		for t := range r.Rating {
			if r.Item[t] == iid {
				rated[r.User[t]] = float64(r.Rating[t])
			}
		}
		pos := 0
		for _, uid := range m.UserIDs {
			x := m.UserFactor(uid)
			c, pref := 1.0, 0.0
			if v, ok := rated[uid]; ok {
				c = 1 + e.Alpha*math.Abs(v)
				if v > 0 {
					pref = 1
					pos++
				}
			}
			outerAdd(a, c, x)
			for p := range x {
				b[p] += c * pref * x[p]
			}
		}
		checkSystem(t, "implicit item", a, b, e.RegParam*float64(pos), m.ItemFactor(iid))
	}
}

// TestNonnegative checks that every factor is ≥ 0 and that the last
// update (the items) satisfies the KKT conditions of its NNLS problem.
func TestNonnegative(t *testing.T) {
	r := tinyRatings(3, 30, 20, 0.3, 1)
	e := NewALS()
	e.Rank, e.MaxIter, e.Nonnegative = 5, 4, true
	m, err := e.FitRatings(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range append(slices.Clone(m.UserFactors), m.ItemFactors...) {
		if v < 0 {
			t.Fatalf("negative factor %g", v)
		}
	}
	k := e.Rank
	for _, id := range m.ItemIDs {
		a, b := zeroSystem(k)
		n := 0
		for t := range r.Rating {
			if r.Item[t] == id {
				x := m.UserFactor(r.User[t])
				outerAdd(a, 1, x)
				for p := range x {
					b[p] += float64(r.Rating[t]) * x[p]
				}
				n++
			}
		}
		y := m.ItemFactor(id)
		for p := range k {
			g := -b[p] + e.RegParam*float64(n)*y[p]
			for c := range k {
				g += a[p][c] * y[c]
			}
			if (y[p] > 0 && math.Abs(g) > 1e-9*max(math.Abs(b[p]), 1)) || (y[p] == 0 && g < -1e-9*max(math.Abs(b[p]), 1)) {
				t.Fatalf("item %d: KKT fails in coordinate %d: y %g, gradient %g", id, p, y[p], g)
			}
		}
	}
}

// TestAsmMatchesGo fits the same data through the assembly kernels and
// the Go code.
func TestAsmMatchesGo(t *testing.T) {
	if !haveAsm {
		t.Skip("no AVX-512 here")
	}
	r := tinyRatings(4, 60, 40, 0.25, 1)
	for _, implicit := range []bool{false, true} {
		fit := func(asm bool) *ALSModel {
			defer func(v bool) { useAsm = v }(useAsm)
			useAsm = asm
			e := NewALS()
			e.ImplicitPrefs = implicit
			m, err := e.FitRatings(r, nil)
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		if d := mltest.DiffModels(fit(true), fit(false), 1e-9); d != "" {
			t.Fatalf("implicit %v: %s", implicit, d)
		}
	}
}

// TestConformance runs ml's suite: fit, transform, save and load, and the
// fit on 2, 3 and 4 ranks equal to the single-process one.
func TestConformance(t *testing.T) {
	for _, implicit := range []bool{false, true} {
		f := ratingsFrame(t, tinyRatings(5, 50, 30, 0.2, 1))
		mltest.Check(t, func() ml.Estimator {
			e := NewALS()
			e.Rank, e.ImplicitPrefs, e.NumUserBlocks, e.NumItemBlocks = 6, implicit, 5, 3
			return e
		}, f, mltest.Options{})
	}
}

// TestEmptyPartition: a rank with no ratings takes part and gets the
// model of the others' ratings.
func TestEmptyPartition(t *testing.T) {
	f := ratingsFrame(t, tinyRatings(6, 20, 10, 0.3, 1))
	newEst := func() ml.Estimator { e := NewALS(); e.Rank = 3; return e }
	single, err := newEst().Fit(ml.Local(f))
	if err != nil {
		t.Fatal(err)
	}
	ms := mltest.FitOnRanks(t, newEst, f, 3, func(f *data.Frame, r, n int) *data.Frame {
		if r == 1 {
			return f.Slice(0, 0)
		}
		return f.Slice(f.Len()*r/4, f.Len()*(r+2)/4)
	})
	for r, m := range ms {
		if d := mltest.DiffModels(single, m, 1e-9); d != "" {
			t.Fatalf("rank %d: %s", r, d)
		}
		if st := m.(*ALSModel).Stats; st.SentBytesPerIter+st.ReceivedBytesPerIter == 0 {
			t.Fatalf("rank %d: no factor traffic reported", r)
		}
	}
}

func TestColdStart(t *testing.T) {
	r := tinyRatings(7, 10, 8, 0.5, 1)
	e := NewALS()
	e.Rank = 2
	m, err := e.FitRatings(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := data.NewFrame(data.NewColumn("user", []int64{int64(r.User[0]), 999999, int64(r.User[0])}, nil),
		data.NewColumn("item", []int64{int64(r.Item[0]), int64(r.Item[0]), 5}, nil))
	if err != nil {
		t.Fatal(err)
	}
	out, err := m.Transform(f)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := out.Float64s("prediction")
	want := 0.0
	for j, v := range m.UserFactor(r.User[0]) {
		want += v * m.ItemFactor(r.Item[0])[j]
	}
	if p[0] != want || !math.IsNaN(p[1]) || !math.IsNaN(p[2]) {
		t.Fatalf("nan strategy: predictions %v, want [%g NaN NaN]", p, want)
	}
	m.ColdStartStrategy = "drop"
	out, err = m.Transform(f)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := out.Float64s("prediction"); len(p) != 1 || p[0] != want || out.Len() != 1 {
		t.Fatalf("drop strategy: %d rows, predictions %v", out.Len(), p)
	}
}

func TestRecommendForAll(t *testing.T) {
	r := tinyRatings(8, 40, 25, 0.3, 1)
	e := NewALS()
	e.Rank, e.BlockSize = 4, 7 // several blocks, the last one short
	m, err := e.FitRatings(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	check := func(rec *Recommendations, xids []int32, xf []float64, yids []int32, yf []float64, k int) {
		t.Helper()
		if rec.K != min(k, len(yids)) || len(rec.IDs) != len(xids) {
			t.Fatalf("K %d for %d wanted, %d ids", rec.K, k, len(rec.IDs))
		}
		for x := range xids {
			type s struct {
				v  float64
				id int32
			}
			all := make([]s, len(yids))
			for j := range yids {
				v := 0.0
				for q := range e.Rank {
					v += xf[x*e.Rank+q] * yf[j*e.Rank+q]
				}
				all[j] = s{v, yids[j]}
			}
			slices.SortFunc(all, func(a, b s) int {
				if a.v != b.v {
					if a.v > b.v {
						return -1
					}
					return 1
				}
				return int(a.id - b.id)
			})
			for q := range rec.K {
				got := rec.Items[x*rec.K+q]
				if got != all[q].id || math.Abs(rec.Scores[x*rec.K+q]-all[q].v) > 1e-12*max(1, math.Abs(all[q].v)) {
					t.Fatalf("row %d, rank %d: %d (%g), brute force %d (%g)", x, q, got, rec.Scores[x*rec.K+q], all[q].id, all[q].v)
				}
			}
		}
	}
	for _, k := range []int{1, 3, 100} {
		rec, err := m.RecommendForAllUsers(k)
		if err != nil {
			t.Fatal(err)
		}
		check(rec, m.UserIDs, m.UserFactors, m.ItemIDs, m.ItemFactors, k)
		rec, err = m.RecommendForAllItems(k)
		if err != nil {
			t.Fatal(err)
		}
		check(rec, m.ItemIDs, m.ItemFactors, m.UserIDs, m.UserFactors, k)
		if _, err := rec.Frame("item"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.RecommendForAllUsers(0); err == nil {
		t.Fatal("k = 0 accepted")
	}
}

func TestBadInput(t *testing.T) {
	fit := func(f *data.Frame, mod func(*ALS)) error {
		e := NewALS()
		if mod != nil {
			mod(e)
		}
		_, err := e.Fit(ml.Local(f))
		return err
	}
	frame := func(u, i, r []float64) *data.Frame {
		f, err := data.NewFrame(data.NewColumn("user", u, nil), data.NewColumn("item", i, nil), data.NewColumn("rating", r, nil))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, c := range []struct {
		name string
		f    *data.Frame
		mod  func(*ALS)
		want string
	}{
		{"non-integer user", frame([]float64{1, 2.5}, []float64{1, 2}, []float64{3, 4}), nil, `column "user", row 2: id 2.5 is not an integer`},
		{"huge item", frame([]float64{1, 2}, []float64{1, 1e12}, []float64{3, 4}), nil, `column "item", row 2`},
		{"NaN rating", frame([]float64{1, 2}, []float64{1, 2}, []float64{math.NaN(), 4}), nil, `column "rating", row 1`},
		{"no ratings", frame(nil, nil, nil), nil, "no ratings"},
		{"missing column", frame([]float64{1}, []float64{1}, []float64{1}), func(e *ALS) { e.ItemCol = "movie" }, `no column "movie"`},
		{"rank", frame([]float64{1}, []float64{1}, []float64{1}), func(e *ALS) { e.Rank = 0 }, "rank must be"},
		{"cold start", frame([]float64{1}, []float64{1}, []float64{1}), func(e *ALS) { e.ColdStartStrategy = "zero" }, "coldStartStrategy"},
		{"singular", frame([]float64{1, 1}, []float64{1, 2}, []float64{1, 1}), func(e *ALS) { e.RegParam = 0; e.Rank = 3 }, "normal equations of user"},
	} {
		err := fit(c.f, c.mod)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func writeBinary(t *testing.T, path string, nu, ni uint64, users, items []int32, ratings []uint8, train uint64) {
	b := []byte(BinaryMagic)
	for _, v := range []uint64{nu, ni, uint64(len(ratings)), train, 42, 10} {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	for _, v := range users {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	for _, v := range items {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	b = append(b, ratings...)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadBinary(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.bin")
	writeBinary(t, p, 3, 4, []int32{0, 2, 1}, []int32{3, 0, 1}, []uint8{5, 1, 3}, 2)
	bf, err := ReadBinary(p)
	if err != nil {
		t.Fatal(err)
	}
	defer bf.Close()
	tr, te := bf.TrainSet(), bf.TestSet()
	if bf.Users != 3 || bf.Items != 4 || tr.Len() != 2 || te.Len() != 1 ||
		!slices.Equal(tr.User, []int32{0, 2}) || !slices.Equal(te.Item, []int32{1}) || !slices.Equal(bf.All.Rating, []float32{5, 1, 3}) {
		t.Fatalf("read %+v, train %+v, test %+v", bf, tr, te)
	}
	bad := filepath.Join(dir, "bad.bin")
	writeBinary(t, bad, 3, 4, []int32{0, 3, 1}, []int32{3, 0, 1}, []uint8{5, 1, 3}, 2)
	if _, err := ReadBinary(bad); err == nil || !strings.Contains(err.Error(), "rating 2: user id 3 outside [0, 3)") {
		t.Fatalf("id out of range: %v", err)
	}
	b, _ := os.ReadFile(p)
	os.WriteFile(bad, b[:len(b)-1], 0o644)
	if _, err := ReadBinary(bad); err == nil || !strings.Contains(err.Error(), "need") {
		t.Fatalf("truncated file: %v", err)
	}
	os.WriteFile(bad, append([]byte("NOTRATIN"), b[8:]...), 0o644)
	if _, err := ReadBinary(bad); err == nil || !strings.Contains(err.Error(), "magic") {
		t.Fatalf("bad magic: %v", err)
	}
}
