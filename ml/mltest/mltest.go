// Package mltest is the conformance suite every ml estimator passes (as
// scikit-learn's check_estimator): it fits, transforms, saves and loads,
// and fits again on the rows split over 2, 3 and 4 ranks of a real process
// group, comparing each model with the single-process one.
//
//	func TestConformance(t *testing.T) {
//		mltest.Check(t, func() ml.Estimator { return NewLogisticRegression() }, frame, mltest.Options{})
//	}
package mltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/commtest"
	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
)

// Options adjust Check.
type Options struct {
	// Tol is the relative tolerance between a distributed model's arrays
	// and the single-process model's [1e-9].
	Tol float64
	// Ranks are the group sizes to try [2, 3, 4]; 1 is always tried.
	Ranks []int
	// Split, if set, gives rank r of n its rows; by default the rows are
	// cut in n contiguous, uneven parts (the first part is the shortest).
	Split func(f *data.Frame, r, n int) *data.Frame
}

// Check runs the conformance suite on the estimator newEst returns (a new
// one each call, with the parameters under test) and the frame f.
func Check(t *testing.T, newEst func() ml.Estimator, f *data.Frame, o Options) ml.Model {
	t.Helper()
	if o.Tol == 0 {
		o.Tol = 1e-9
	}
	if o.Ranks == nil {
		o.Ranks = []int{2, 3, 4}
	}
	if o.Split == nil {
		o.Split = SplitRows
	}
	names := f.Names()
	m, err := newEst().Fit(ml.Local(f))
	if err != nil {
		t.Fatalf("Fit: %v", err)
	}
	if !slices.Equal(f.Names(), names) {
		t.Fatalf("Fit changed the input frame's columns: %v, was %v", f.Names(), names)
	}
	out, err := m.Transform(f)
	if err != nil {
		t.Fatalf("Transform: %v", err)
	}
	if !slices.Equal(f.Names(), names) {
		t.Fatalf("Transform changed the input frame's columns: %v, was %v", f.Names(), names)
	}
	if out.Len() != f.Len() {
		t.Fatalf("Transform: %d rows out of %d", out.Len(), f.Len())
	}
	if err := checkFinite(out, names); err != nil {
		t.Fatalf("Transform: %v", err)
	}

	// Save and load: the same arrays and the same output, bit for bit.
	path := filepath.Join(t.TempDir(), "model.safetensors")
	if err := ml.SaveModel(path, m); err != nil {
		t.Fatalf("SaveModel: %v", err)
	}
	back, err := ml.LoadModel(path)
	if err != nil {
		t.Fatalf("LoadModel: %v", err)
	}
	if back.Type() != m.Type() {
		t.Fatalf("LoadModel: type %q, saved %q", back.Type(), m.Type())
	}
	if d := DiffModels(m, back, 0); d != "" {
		t.Fatalf("LoadModel(SaveModel(m)) differs from m: %s", d)
	}
	out2, err := back.Transform(f)
	if err != nil {
		t.Fatalf("Transform of the loaded model: %v", err)
	}
	if d := DiffFrames(out, out2, 0); d != "" {
		t.Fatalf("the loaded model transforms differently: %s", d)
	}

	for _, n := range o.Ranks {
		if n > f.Len() {
			continue
		}
		ms := FitOnRanks(t, newEst, f, n, o.Split)
		for r, mr := range ms {
			if d := DiffModels(m, mr, o.Tol); d != "" {
				t.Fatalf("%d ranks: rank %d's model differs from the single-process one: %s", n, r, d)
			}
			if r > 0 {
				if d := DiffModels(ms[0], mr, 0); d != "" {
					t.Fatalf("%d ranks: rank %d's model differs from rank 0's: %s", n, r, d)
				}
			}
		}
	}
	return m
}

// SplitRows gives rank r of n a contiguous share of f's rows; shares
// differ in length when n does not divide the rows (rank 0's is the
// shortest), so that uneven partitions are exercised.
func SplitRows(f *data.Frame, r, n int) *data.Frame {
	rows := f.Len()
	lo := rows * r / n
	hi := rows * (r + 1) / n
	return f.Slice(lo, hi)
}

// FitOnRanks fits newEst on f split over n ranks of a TCP process group
// on loopback and returns every rank's model.
func FitOnRanks(t *testing.T, newEst func() ml.Estimator, f *data.Frame, n int, split func(*data.Frame, int, int) *data.Frame) []ml.Model {
	t.Helper()
	if split == nil {
		split = SplitRows
	}
	gs := commtest.Groups(t, n, comm.TransportTCP, nil)
	ms := make([]ml.Model, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r, g := range gs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ms[r], errs[r] = newEst().Fit(ml.Partitioned(split(f, r, n), ml.Group(g)))
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("%d ranks: rank %d: Fit: %v", n, r, err)
		}
	}
	return ms
}

// FailOnOneRank fits newEst on n ranks of a TCP process group on
// loopback, rank r on part(r), where rank bad's part is invalid: that
// rank's error must contain wantBad and every other rank's wantOther
// (none may wait for it forever).
func FailOnOneRank(t *testing.T, newEst func() ml.Estimator, n, bad int, part func(r int) *data.Frame, wantBad, wantOther string) {
	t.Helper()
	gs := commtest.Groups(t, n, comm.TransportTCP, nil)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r, g := range gs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[r] = newEst().Fit(ml.Partitioned(part(r), ml.Group(g)))
		}()
	}
	wg.Wait()
	for r, err := range errs {
		want := wantOther
		if r == bad {
			want = wantBad
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("rank %d: %v, want an error containing %q", r, err, want)
		}
	}
}

// DiffModels compares two models' types, params and arrays; arrays within
// relative tolerance tol (0: bit for bit). It returns "" when they match,
// otherwise what differs.
func DiffModels(a, b ml.Model, tol float64) string {
	ea, err := a.Encode()
	if err != nil {
		return "Encode: " + err.Error()
	}
	eb, err := b.Encode()
	if err != nil {
		return "Encode: " + err.Error()
	}
	if a.Type() != b.Type() {
		return fmt.Sprintf("type %s vs %s", a.Type(), b.Type())
	}
	if d := diffParams(ea.Params, eb.Params, tol); d != "" {
		return "params: " + d
	}
	keys := func(m map[string]ml.Array) []string {
		out := make([]string, 0, len(m))
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	if ka, kb := keys(ea.Arrays), keys(eb.Arrays); !slices.Equal(ka, kb) {
		return fmt.Sprintf("arrays %v vs %v", ka, kb)
	}
	for _, k := range keys(ea.Arrays) {
		x, y := ea.Arrays[k], eb.Arrays[k]
		if !slices.Equal(x.Shape, y.Shape) {
			return fmt.Sprintf("array %s: shape %v vs %v", k, x.Shape, y.Shape)
		}
		if i := diffValues(x.Data, y.Data, tol); i >= 0 {
			return fmt.Sprintf("array %s[%d]: %.17g vs %.17g (relative tolerance %g)", k, i, x.Data[i], y.Data[i], tol)
		}
	}
	return ""
}

// diffValues returns the first index where a and b differ by more than
// tol relative to max(|a_i|, |b_i|, 1e-6·max|a|), or −1.
func diffValues(a, b []float64, tol float64) int {
	scale := 0.0
	for _, v := range a {
		scale = max(scale, math.Abs(v))
	}
	for i := range a {
		x, y := a[i], b[i]
		if x == y || (math.IsNaN(x) && math.IsNaN(y)) {
			continue
		}
		if tol == 0 || math.Abs(x-y) > tol*max(math.Abs(x), math.Abs(y), 1e-6*scale) {
			return i
		}
	}
	return -1
}

// DiffFrames compares the numeric and vector columns of two frames
// (strings exactly); "" when they match within tol.
func DiffFrames(a, b *data.Frame, tol float64) string {
	if !slices.Equal(a.Names(), b.Names()) {
		return fmt.Sprintf("columns %v vs %v", a.Names(), b.Names())
	}
	for _, name := range a.Names() {
		ca, cb := a.Col(name), b.Col(name)
		if ca.Kind() != cb.Kind() {
			return fmt.Sprintf("column %s: %s vs %s", name, ca.Kind(), cb.Kind())
		}
		if sa, ok := ca.(*data.ScalarColumn[string]); ok {
			if !slices.Equal(sa.Values(), cb.(*data.ScalarColumn[string]).Values()) {
				return "column " + name + " differs"
			}
			continue
		}
		x, errA := columnFloats(ca)
		y, errB := columnFloats(cb)
		if errA != nil || errB != nil {
			continue
		}
		if len(x) != len(y) {
			return fmt.Sprintf("column %s: %d vs %d values", name, len(x), len(y))
		}
		if i := diffValues(x, y, tol); i >= 0 {
			return fmt.Sprintf("column %s, value %d: %.17g vs %.17g", name, i, x[i], y[i])
		}
	}
	return ""
}

func columnFloats(c data.Column) ([]float64, error) {
	switch c := c.(type) {
	case *data.VectorColumn:
		if v := c.Float64s(); v != nil {
			return v, nil
		}
		out := make([]float64, len(c.Float32s()))
		for i, x := range c.Float32s() {
			out[i] = float64(x)
		}
		return out, nil
	case *data.ScalarColumn[float64]:
		return c.Values(), nil
	case *data.ScalarColumn[float32]:
		out := make([]float64, c.Len())
		for i, x := range c.Values() {
			out[i] = float64(x)
		}
		return out, nil
	case *data.ScalarColumn[int64]:
		out := make([]float64, c.Len())
		for i, x := range c.Values() {
			out[i] = float64(x)
		}
		return out, nil
	}
	return nil, fmt.Errorf("not numeric")
}

// checkFinite looks for NaN in the columns a transform added.
func checkFinite(f *data.Frame, input []string) error {
	for _, name := range f.Names() {
		if slices.Contains(input, name) {
			continue
		}
		v, err := columnFloats(f.Col(name))
		if err != nil {
			continue
		}
		for i, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("new column %s: %g at value %d", name, x, i)
			}
		}
	}
	return nil
}

// diffParams compares two models' params as their JSON: strings, booleans
// and structure exactly, numbers within relative tolerance tol (0: equal).
func diffParams(a, b any, tol float64) string {
	ja, err := json.Marshal(a)
	if err != nil {
		return "marshal: " + err.Error()
	}
	jb, err := json.Marshal(b)
	if err != nil {
		return "marshal: " + err.Error()
	}
	var va, vb any
	dec := func(js []byte, v *any) error {
		d := json.NewDecoder(bytes.NewReader(js))
		d.UseNumber()
		return d.Decode(v)
	}
	if err := dec(ja, &va); err != nil {
		return err.Error()
	}
	if err := dec(jb, &vb); err != nil {
		return err.Error()
	}
	return diffJSON("", va, vb, tol)
}

func diffJSON(path string, a, b any, tol float64) string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return fmt.Sprintf("%s: %v vs %v", path, a, b)
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if d := diffJSON(path+"."+k, x[k], y[k], tol); d != "" {
				return d
			}
		}
		return ""
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return fmt.Sprintf("%s: %d vs %d elements", path, len(x), len(y))
		}
		for i := range x {
			if d := diffJSON(fmt.Sprintf("%s[%d]", path, i), x[i], y[i], tol); d != "" {
				return d
			}
		}
		return ""
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return fmt.Sprintf("%s: %v vs %v", path, a, b)
		}
		if x == y {
			return ""
		}
		fx, errX := x.Float64()
		fy, errY := y.Float64()
		if errX != nil || errY != nil || diffValues([]float64{fx}, []float64{fy}, tol) >= 0 {
			return fmt.Sprintf("%s: %s vs %s (relative tolerance %g)", path, x, y, tol)
		}
		return ""
	}
	if fmt.Sprint(a) != fmt.Sprint(b) {
		return fmt.Sprintf("%s: %v vs %v", path, a, b)
	}
	return ""
}
