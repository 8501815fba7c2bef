package ml_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fathom-ml/fathom/comm"
	"github.com/fathom-ml/fathom/comm/commtest"
	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/mltest"
	"github.com/fathom-ml/fathom/safetensors"
)

// meanRegressor predicts the (weighted) mean label of all ranks plus a
// per-feature offset: the smallest estimator that exercises Fit over a
// Comm, arrays and params.
type meanRegressor struct {
	LabelCol string  `json:"labelCol"`
	Shift    float64 `json:"shift"`
}

func (e *meanRegressor) Type() string       { return "testMeanRegressor" }
func (e *meanRegressor) Copy() ml.Estimator { c := *e; return &c }
func (e *meanRegressor) Fit(d ml.Data) (ml.Model, error) {
	y, err := ml.Numbers(d.Frame, e.LabelCol)
	if err != nil {
		return nil, err
	}
	x, err := ml.Features(d.Frame, ml.FeaturesCol)
	if err != nil {
		return nil, err
	}
	s := make([]float64, 2+x.Cols)
	for i, v := range y {
		s[0] += v
		s[1]++
		for j, f := range x.Row(i) {
			s[2+j] += f
		}
	}
	if err := d.C().AllReduce(s, ml.OpSum); err != nil {
		return nil, err
	}
	if s[1] == 0 {
		return nil, errors.New("no rows")
	}
	m := &meanModel{Shift: e.Shift, Mean: s[0] / s[1], FeatureMeans: s[2:]}
	for j := range m.FeatureMeans {
		m.FeatureMeans[j] /= s[1]
	}
	return m, nil
}

type meanModel struct {
	Shift        float64
	Mean         float64
	FeatureMeans []float64
}

func (m *meanModel) Type() string { return "testMeanModel" }
func (m *meanModel) Transform(f *data.Frame) (*data.Frame, error) {
	p := make([]float64, f.Len())
	for i := range p {
		p[i] = m.Mean + m.Shift
	}
	return ml.WithColumns(f, ml.ScalarOut(ml.PredictionCol, p))
}
func (m *meanModel) Encode() (ml.Encoded, error) {
	return ml.Encoded{
		Params: struct {
			Shift float64 `json:"shift"`
		}{m.Shift},
		Arrays: map[string]ml.Array{"mean": ml.Vec([]float64{m.Mean}), "featureMeans": ml.Vec(m.FeatureMeans)},
	}, nil
}

// doubler is a fitting-free Model: it adds a column twice another.
type doubler struct{ In, Out string }

func (t *doubler) Type() string { return "testDoubler" }
func (t *doubler) Transform(f *data.Frame) (*data.Frame, error) {
	v, err := ml.Numbers(f, t.In)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = 2 * x
	}
	return ml.WithColumns(f, ml.ScalarOut(t.Out, out))
}
func (t *doubler) Encode() (ml.Encoded, error) { return ml.Encoded{Params: t}, nil }

func init() {
	ml.RegisterModel("testMeanModel", func(raw json.RawMessage, arrays map[string]ml.Array) (ml.Model, error) {
		var p struct {
			Shift float64 `json:"shift"`
		}
		if err := ml.DecodeParams(raw, &p); err != nil {
			return nil, err
		}
		mean, err := ml.Need(arrays, "mean", 1)
		if err != nil {
			return nil, err
		}
		fm, err := ml.Need(arrays, "featureMeans", -1)
		if err != nil {
			return nil, err
		}
		return &meanModel{Shift: p.Shift, Mean: mean.Data[0], FeatureMeans: fm.Data}, nil
	})
	ml.RegisterModel("testDoubler", func(raw json.RawMessage, _ map[string]ml.Array) (ml.Model, error) {
		t := &doubler{}
		return t, ml.DecodeParams(raw, t)
	})
	ml.RegisterStage("testMeanRegressor", func() ml.Stage { return &meanRegressor{LabelCol: "label"} })
}

func testFrame(t *testing.T, n int) *data.Frame {
	t.Helper()
	y := make([]float64, n)
	x := make([]float64, 2*n)
	for i := range n {
		y[i] = float64(i*i%7) + 0.25
		x[2*i], x[2*i+1] = float64(i), float64(-3*i)
	}
	f, err := data.NewFrame(data.NewColumn("label", y, nil), data.NewVectorColumn(ml.FeaturesCol, 2, x, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestConformanceOfTheSuiteItself(t *testing.T) {
	f := testFrame(t, 23)
	m := mltest.Check(t, func() ml.Estimator { return &meanRegressor{LabelCol: "label", Shift: 0.5} }, f, mltest.Options{})
	mm := m.(*meanModel)
	sum := 0.0
	for i := range 23 {
		sum += float64(i*i%7) + 0.25
	}
	if want := sum / 23; mm.Mean != want {
		t.Fatalf("mean %v, want %v", mm.Mean, want)
	}
}

func TestPipelineFitTransformSaveLoad(t *testing.T) {
	f := testFrame(t, 10)
	p := ml.NewPipeline(&doubler{In: "label", Out: "label2"}, &meanRegressor{LabelCol: "label2", Shift: 1})
	m, err := p.Fit(ml.Local(f))
	if err != nil {
		t.Fatal(err)
	}
	out, err := m.Transform(f)
	if err != nil {
		t.Fatal(err)
	}
	pred, _ := out.Float64s(ml.PredictionCol)
	y, _ := f.Float64s("label")
	mean := 0.0
	for _, v := range y {
		mean += 2 * v
	}
	mean /= float64(len(y))
	if pred[3] != mean+1 {
		t.Fatalf("prediction %v, want %v", pred[3], mean+1)
	}
	path := filepath.Join(t.TempDir(), "p.safetensors")
	if err := ml.SaveModel(path, m); err != nil {
		t.Fatal(err)
	}
	back, err := ml.LoadModel(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := mltest.DiffModels(m, back, 0); d != "" {
		t.Fatal(d)
	}
	st, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.Tensor("stages.1.mean"); !ok {
		t.Fatalf("the pipeline's arrays are not under stages.<i>.: %v", st.Tensors)
	}

	// The pipeline refuses a stage that is neither estimator nor model.
	if _, err := ml.NewPipeline(notAStage{}).Fit(ml.Local(f)); err == nil || !strings.Contains(err.Error(), "neither an Estimator nor a Model") {
		t.Fatalf("err = %v", err)
	}
	// Errors of a stage name the stage.
	_, err = ml.NewPipeline(&meanRegressor{LabelCol: "nope"}).Fit(ml.Local(f))
	if err == nil || !strings.Contains(err.Error(), "stage 1 (testMeanRegressor)") || !strings.Contains(err.Error(), `no column "nope"`) {
		t.Fatalf("err = %v", err)
	}
}

type notAStage struct{}

func (notAStage) Type() string { return "notAStage" }

func TestLoadModelErrors(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.safetensors")
	if err := safetensors.WriteFile(plain, []safetensors.Entry{safetensors.F64("x", []int{1}, []float64{1})}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ml.LoadModel(plain); !errors.Is(err, ml.ErrNotModel) {
		t.Fatalf("plain safetensors: %v", err)
	}
	unknown := filepath.Join(dir, "unknown.safetensors")
	meta := map[string]string{"fathom.ml": `{"format":1,"type":"NoSuchModel"}`}
	if err := safetensors.WriteFile(unknown, nil, meta); err != nil {
		t.Fatal(err)
	}
	if _, err := ml.LoadModel(unknown); err == nil || !strings.Contains(err.Error(), `unknown model type "NoSuchModel"`) {
		t.Fatalf("unknown type: %v", err)
	}
	// A missing array is named.
	bad := filepath.Join(dir, "bad.safetensors")
	meta = map[string]string{"fathom.ml": `{"format":1,"type":"testMeanModel","params":{"shift":1}}`}
	if err := safetensors.WriteFile(bad, []safetensors.Entry{safetensors.F64("mean", []int{1}, []float64{2})}, meta); err != nil {
		t.Fatal(err)
	}
	if _, err := ml.LoadModel(bad); err == nil || !strings.Contains(err.Error(), `array "featureMeans" missing`) {
		t.Fatalf("missing array: %v", err)
	}
	// Unknown params are refused.
	meta = map[string]string{"fathom.ml": `{"format":1,"type":"testMeanModel","params":{"shift":1,"extra":2}}`}
	if err := safetensors.WriteFile(bad, nil, meta); err != nil {
		t.Fatal(err)
	}
	if _, err := ml.LoadModel(bad); err == nil || !strings.Contains(err.Error(), "unknown field") {
		t.Fatalf("unknown param: %v", err)
	}
	if _, err := ml.LoadModel(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

func TestStageRegistry(t *testing.T) {
	s, err := ml.NewStage("testMeanRegressor")
	if err != nil {
		t.Fatal(err)
	}
	if s.(*meanRegressor).LabelCol != "label" {
		t.Fatal("defaults not applied")
	}
	if _, err := ml.NewStage("Nope"); err == nil || !strings.Contains(err.Error(), "testMeanRegressor") {
		t.Fatalf("unknown stage: %v", err)
	}
}

func TestGroupComm(t *testing.T) {
	const n = 3
	gs := commtest.Groups(t, n, comm.TransportTCP, nil)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for r, g := range gs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = func() error {
				c := ml.Group(g)
				if c.Rank() != r || c.Size() != n {
					return fmt.Errorf("rank %d size %d", c.Rank(), c.Size())
				}
				// Lengths 0, 9 and 3: uneven and not multiples of 8.
				mine := []byte(strings.Repeat(string(rune('a'+r)), []int{0, 9, 3}[r]))
				all, err := c.AllGatherBytes(mine)
				if err != nil {
					return err
				}
				if got := fmt.Sprintf("%q", all); got != `["" "bbbbbbbbb" "ccc"]` {
					return fmt.Errorf("gathered %s", got)
				}
				x := []float64{float64(r), -float64(r)}
				if err := c.AllReduce(x, ml.OpMax); err != nil {
					return err
				}
				if x[0] != 2 || x[1] != 0 {
					return fmt.Errorf("max %v", x)
				}
				x = []float64{float64(r)}
				if err := c.AllReduce(x, ml.OpSum); err != nil {
					return err
				}
				if x[0] != 3 {
					return fmt.Errorf("sum %v", x)
				}
				b := []float64{float64(r + 10)}
				if err := c.Broadcast(b, 2); err != nil {
					return err
				}
				if b[0] != 12 {
					return fmt.Errorf("broadcast %v", b)
				}
				k, err := ml.SumCount(c, r+1)
				if err != nil || k != 6 {
					return fmt.Errorf("SumCount %d %v", k, err)
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	commtest.MustAll(t, "group comm", errs)
}

func TestFeaturesErrors(t *testing.T) {
	valid := []bool{true, false, true}
	f, _ := data.NewFrame(
		data.NewVectorColumn("v", 2, []float64{1, 2, 3, 4, 5, 6}, valid, nil),
		data.NewColumn("s", []string{"a", "b", "c"}, nil),
		data.NewColumn("y", []float64{0, 1.5, 1}, nil),
	)
	for _, c := range []struct {
		do   func() error
		want string
	}{
		{func() error { _, err := ml.Features(f, "v"); return err }, `column "v", row 2: missing vector`},
		{func() error { _, err := ml.Features(f, "nope"); return err }, `no column "nope"`},
		{func() error { _, err := ml.Numbers(f, "s"); return err }, `column "s" is string, not numeric`},
		{func() error { _, _, err := ml.Classes(ml.Local(f), "y"); return err }, `column "y", row 2: label 1.5 is not a class index`},
	} {
		if err := c.do(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want %q", err, c.want)
		}
	}
}

// A rank with a bad label fails naming it; the others fail with
// ErrOtherRank instead of waiting for it in the reduction.
func TestClassesBadRankDoesNotHang(t *testing.T) {
	gs := commtest.Groups(t, 3, comm.TransportTCP, nil)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for r, g := range gs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			y := []float64{0, 1, 2}
			if r == 1 {
				y[2] = 0.5
			}
			f, _ := data.NewFrame(data.NewColumn("label", y, nil))
			_, _, errs[r] = ml.Classes(ml.Partitioned(f, ml.Group(g)), "label")
		}()
	}
	wg.Wait()
	for r, err := range errs {
		want := "another rank's data is invalid"
		if r == 1 {
			want = `column "label", row 3: label 0.5`
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

func TestTableFrame(t *testing.T) {
	tab := &data.Table{Rows: 2, Cols: 3, X: []float32{1, 2, 3, 4, 5, 6}, Labels: []int64{1, 0}, Classes: []string{"a", "b"}}
	f, err := ml.TableFrame(tab)
	if err != nil {
		t.Fatal(err)
	}
	x, err := ml.Features(f, ml.FeaturesCol)
	if err != nil || x.Rows != 2 || x.Cols != 3 || x.Data[5] != 6 {
		t.Fatalf("features %+v, %v", x, err)
	}
	if y, _ := f.Float64s(ml.LabelCol); y[0] != 1 || y[1] != 0 {
		t.Fatalf("labels %v", y)
	}
	tab.Labels, tab.Y = nil, []float32{0.5, -2}
	if f, err = ml.TableFrame(tab); err != nil {
		t.Fatal(err)
	}
	if y, _ := f.Float64s(ml.LabelCol); y[1] != -2 {
		t.Fatalf("targets %v", y)
	}
	tab.Y = nil
	if _, err := ml.TableFrame(tab); err == nil {
		t.Fatal("a table without labels or targets accepted")
	}
}
