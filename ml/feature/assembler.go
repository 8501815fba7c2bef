package feature

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
)

// VectorAssembler concatenates numeric scalar, bool and vector columns
// into one float64 vector column, as Spark ML's VectorAssembler. It needs
// no fitting: it is a Model.
//
// An invalid input — a null or NaN scalar, a null vector, a null vector
// element — is handled as handleInvalid says: "error" (the default)
// fails naming the column and the row, "skip" drops the row, "keep"
// writes NaN (for a null vector, as many NaNs as the column is wide). As
// in Spark, a NaN inside a vector is not invalid: it is copied.
type VectorAssembler struct {
	InputCols     []string `json:"inputCols" yaml:"inputCols"`
	OutputCol     string   `json:"outputCol" yaml:"outputCol"`
	HandleInvalid string   `json:"handleInvalid" yaml:"handleInvalid"`
}

// NewVectorAssembler returns a VectorAssembler with Spark's defaults
// (handleInvalid "error") writing ml.FeaturesCol.
func NewVectorAssembler(inputCols ...string) *VectorAssembler {
	return &VectorAssembler{InputCols: inputCols, OutputCol: ml.FeaturesCol, HandleInvalid: InvalidError}
}

// Type returns "VectorAssembler".
func (a *VectorAssembler) Type() string { return "VectorAssembler" }

// Encode returns the parameters (a VectorAssembler has no arrays).
func (a *VectorAssembler) Encode() (ml.Encoded, error) { return ml.Encoded{Params: a}, nil }

// assemblerInput reads one input column: get returns element e of row i
// and whether it is missing; NaN is invalid in a scalar column only.
type assemblerInput struct {
	name   string
	width  int
	scalar bool
	get    func(i, e int) (float64, bool)
}

// Transform adds OutputCol.
func (a *VectorAssembler) Transform(f *data.Frame) (*data.Frame, error) {
	const stage = "VectorAssembler"
	if err := ml.CheckChoice(stage, "handleInvalid", a.HandleInvalid, InvalidError, InvalidSkip, InvalidKeep); err != nil {
		return nil, err
	}
	if len(a.InputCols) == 0 {
		return nil, fmt.Errorf("%s: inputCols is empty", stage)
	}
	if a.OutputCol == "" {
		return nil, fmt.Errorf("%s: outputCol is not set", stage)
	}
	ins := make([]assemblerInput, len(a.InputCols))
	width := 0
	for k, name := range a.InputCols {
		c, err := column(stage, f, name)
		if err != nil {
			return nil, err
		}
		if vc, ok := c.(*data.VectorColumn); ok {
			ins[k] = assemblerInput{name: name, width: vc.Width(), get: func(i, e int) (float64, bool) {
				if vc.IsNull(i) || vc.ElemNull(i, e) {
					return math.NaN(), true
				}
				return vc.At(i, e), false
			}}
		} else {
			v, null, err := scalars(stage, f, name)
			if err != nil {
				return nil, err
			}
			ins[k] = assemblerInput{name: name, width: 1, scalar: true, get: func(i, _ int) (float64, bool) {
				if null != nil && null[i] {
					return math.NaN(), true
				}
				return v[i], false
			}}
		}
		width += ins[k].width
	}
	n := f.Len()
	out := make([]float64, 0, n*width)
	var keep []bool
	if a.HandleInvalid == InvalidSkip {
		keep = make([]bool, n)
	}
rows:
	for i := range n {
		start := len(out)
		for _, in := range ins {
			for e := range in.width {
				x, null := in.get(i, e)
				if (null || in.scalar && math.IsNaN(x)) && a.HandleInvalid != InvalidKeep {
					if a.HandleInvalid == InvalidSkip {
						out = out[:start]
						continue rows
					}
					what := "NaN"
					if null {
						what = "null"
					}
					where := ""
					if in.width > 1 {
						where = fmt.Sprintf(", element %d", e+1)
					}
					return nil, fmt.Errorf("%s: column %q, row %d%s: %s value (set handleInvalid to \"skip\" or \"keep\")", stage, in.name, i+1, where, what)
				}
				out = append(out, x)
			}
		}
		if keep != nil {
			keep[i] = true
		}
	}
	if keep != nil {
		f = keepRows(f, keep)
	}
	return f.With(ml.VectorOut(a.OutputCol, width, out))
}

func decodeVectorAssembler(raw json.RawMessage, _ map[string]ml.Array) (ml.Model, error) {
	a := NewVectorAssembler()
	if err := ml.DecodeParams(raw, a); err != nil {
		return nil, err
	}
	return a, nil
}

func init() {
	ml.RegisterStage("VectorAssembler", func() ml.Stage { return NewVectorAssembler() })
	ml.RegisterModel("VectorAssembler", decodeVectorAssembler)
}
