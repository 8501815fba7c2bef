package feature

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
)

// The values of the handleInvalid parameter.
const (
	InvalidError = "error"
	InvalidSkip  = "skip"
	InvalidKeep  = "keep"
)

// columnPairs resolves Spark's two ways of naming columns: inputCol and
// outputCol for one column, inputCols and outputCols for several. Exactly
// one way must be used.
func columnPairs(stage, inputCol, outputCol string, inputCols, outputCols []string) (in, out []string, err error) {
	switch {
	case inputCol != "" && len(inputCols) > 0:
		return nil, nil, fmt.Errorf("%s: set inputCol or inputCols, not both", stage)
	case inputCol != "":
		if len(outputCols) > 0 {
			return nil, nil, fmt.Errorf("%s: inputCol goes with outputCol, not outputCols", stage)
		}
		if outputCol == "" {
			return nil, nil, fmt.Errorf("%s: outputCol is not set", stage)
		}
		return []string{inputCol}, []string{outputCol}, nil
	case len(inputCols) > 0:
		if outputCol != "" {
			return nil, nil, fmt.Errorf("%s: inputCols goes with outputCols, not outputCol", stage)
		}
		if len(outputCols) != len(inputCols) {
			return nil, nil, fmt.Errorf("%s: %d inputCols but %d outputCols", stage, len(inputCols), len(outputCols))
		}
		for i, c := range inputCols {
			if c == "" || outputCols[i] == "" {
				return nil, nil, fmt.Errorf("%s: inputCols[%d] and outputCols[%d] must be named", stage, i, i)
			}
		}
		return slices.Clone(inputCols), slices.Clone(outputCols), nil
	}
	return nil, nil, fmt.Errorf("%s: set inputCol (and outputCol) or inputCols (and outputCols)", stage)
}

// column returns f's column name, or an error listing the columns there are.
func column(stage string, f *data.Frame, name string) (data.Column, error) {
	c := f.Col(name)
	if c == nil {
		return nil, fmt.Errorf("%s: no column %q (the frame has %s)", stage, name, strings.Join(f.Names(), ", "))
	}
	return c, nil
}

// scalars returns a numeric scalar column (float64, float32, int64 or
// bool) as float64s, with null rows reported in the mask (nil when none).
// NaN stays NaN: what it means is the caller's business.
func scalars(stage string, f *data.Frame, name string) (v []float64, null []bool, err error) {
	c, err := column(stage, f, name)
	if err != nil {
		return nil, nil, err
	}
	v = make([]float64, c.Len())
	switch c := c.(type) {
	case *data.ScalarColumn[float64]:
		copy(v, c.Values())
	case *data.ScalarColumn[float32]:
		for i, x := range c.Values() {
			v[i] = float64(x)
		}
	case *data.ScalarColumn[int64]:
		for i, x := range c.Values() {
			v[i] = float64(x)
		}
	case *data.ScalarColumn[bool]:
		for i, x := range c.Values() {
			if x {
				v[i] = 1
			}
		}
	default:
		return nil, nil, fmt.Errorf("%s: column %q is %s, not a numeric scalar column%s", stage, name, c.Kind(), hint(c.Kind()))
	}
	if c.NullCount() > 0 {
		null = make([]bool, len(v))
		for i := range null {
			null[i] = c.IsNull(i)
		}
	}
	return v, null, nil
}

func hint(k data.Kind) string {
	if k == data.String {
		return " (index strings with StringIndexer first)"
	}
	return ""
}

// matrix reads the vector (or numeric scalar) column col as a dense matrix
// and checks that every rank has the same width.
func matrix(stage string, d ml.Data, col string) (ml.Matrix, error) {
	if d.Frame.Col(col) == nil {
		return ml.Matrix{}, fmt.Errorf("%s: no column %q (the frame has %s)", stage, col, strings.Join(d.Frame.Names(), ", "))
	}
	m, err := ml.Features(d.Frame, col)
	if err != nil {
		return ml.Matrix{}, fmt.Errorf("%s: %w", stage, err)
	}
	w := []float64{float64(m.Cols), -float64(m.Cols)}
	if err := d.C().AllReduce(w, ml.OpMax); err != nil {
		return ml.Matrix{}, err
	}
	if int(w[0]) != m.Cols || int(-w[1]) != m.Cols {
		return ml.Matrix{}, fmt.Errorf("%s: column %q is %d wide on rank %d, but between %d and %d wide over the ranks", stage, col, m.Cols, d.C().Rank(), int(-w[1]), int(w[0]))
	}
	return m, nil
}

// transformMatrix reads col for a model's Transform, checking its width
// against the fitted one (width < 0: any width).
func transformMatrix(stage string, f *data.Frame, col string, width int) (ml.Matrix, error) {
	if f.Col(col) == nil {
		return ml.Matrix{}, fmt.Errorf("%s: no column %q (the frame has %s)", stage, col, strings.Join(f.Names(), ", "))
	}
	m, err := ml.Features(f, col)
	if err != nil {
		return ml.Matrix{}, fmt.Errorf("%s: %w", stage, err)
	}
	if width >= 0 && m.Cols != width {
		return ml.Matrix{}, fmt.Errorf("%s: column %q is %d wide, the model was fitted on %d", stage, col, m.Cols, width)
	}
	return m, nil
}

// gatherCounts all-gathers every rank's category counts (one map per
// column) and returns their sums. The encoding is binary, so that any
// bytes survive (JSON would replace invalid UTF-8): per column the number
// of categories, then each category's length, bytes and count.
func gatherCounts(c ml.Comm, counts []map[string]int64) ([]map[string]int64, error) {
	var b []byte
	for _, m := range counts {
		b = binary.LittleEndian.AppendUint64(b, uint64(len(m)))
		for k, n := range m {
			b = binary.LittleEndian.AppendUint64(b, uint64(len(k)))
			b = append(b, k...)
			b = binary.LittleEndian.AppendUint64(b, uint64(n))
		}
	}
	all, err := c.AllGatherBytes(b)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]int64, len(counts))
	for j := range out {
		out[j] = map[string]int64{}
	}
	for r, b := range all {
		next := func() (uint64, bool) {
			if len(b) < 8 {
				return 0, false
			}
			v := binary.LittleEndian.Uint64(b)
			b = b[8:]
			return v, true
		}
		for j := range counts {
			m, ok := next()
			if !ok {
				return nil, fmt.Errorf("rank %d sent counts for %d columns, want %d", r, j, len(counts))
			}
			for range m {
				l, ok := next()
				if !ok || uint64(len(b)) < l {
					return nil, fmt.Errorf("rank %d sent damaged counts", r)
				}
				k := string(b[:l])
				b = b[l:]
				n, ok := next()
				if !ok {
					return nil, fmt.Errorf("rank %d sent damaged counts", r)
				}
				out[j][k] += int64(n)
			}
		}
	}
	return out, nil
}

// javaDouble formats v as Java's Double.toString does (Spark's cast of a
// double to a string): "1.0", "0.25", "1.0E7", "1.0E-4", "NaN".
func javaDouble(v float64, bits int) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	case v == 0:
		if math.Signbit(v) {
			return "-0.0"
		}
		return "0.0"
	}
	a := math.Abs(v)
	if a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(v, 'f', -1, bits)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(v, 'e', -1, bits)
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// keys returns the category keys of a scalar column, as Spark casts its
// values to strings (StringIndexer indexes numbers by their string form),
// and the null mask.
func keys(stage string, f *data.Frame, name string) ([]string, []bool, error) {
	c, err := column(stage, f, name)
	if err != nil {
		return nil, nil, err
	}
	out := make([]string, c.Len())
	switch c := c.(type) {
	case *data.ScalarColumn[string]:
		copy(out, c.Values())
	case *data.ScalarColumn[float64]:
		for i, x := range c.Values() {
			out[i] = javaDouble(x, 64)
		}
	case *data.ScalarColumn[float32]:
		for i, x := range c.Values() {
			out[i] = javaDouble(float64(x), 32)
		}
	case *data.ScalarColumn[int64]:
		for i, x := range c.Values() {
			out[i] = strconv.FormatInt(x, 10)
		}
	case *data.ScalarColumn[bool]:
		for i, x := range c.Values() {
			out[i] = strconv.FormatBool(x)
		}
	default:
		return nil, nil, fmt.Errorf("%s: column %q is %s; it indexes string and numeric scalar columns", stage, name, c.Kind())
	}
	var null []bool
	if c.NullCount() > 0 {
		null = make([]bool, c.Len())
		for i := range null {
			null[i] = c.IsNull(i)
		}
	}
	return out, null, nil
}

// keepRows returns f restricted to the rows where keep is true (f itself
// when every row is kept).
func keepRows(f *data.Frame, keep []bool) *data.Frame {
	rows := make([]int, 0, len(keep))
	for i, k := range keep {
		if k {
			rows = append(rows, i)
		}
	}
	if len(rows) == len(keep) {
		return f
	}
	return f.Take(rows)
}
