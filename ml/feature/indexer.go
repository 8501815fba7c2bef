package feature

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
)

// The values of StringIndexer's stringOrderType.
const (
	FrequencyDesc = "frequencyDesc"
	FrequencyAsc  = "frequencyAsc"
	AlphabetDesc  = "alphabetDesc"
	AlphabetAsc   = "alphabetAsc"
)

// LabelsMetadataKey is the frame metadata key under which
// StringIndexerModel.Transform records an output column's labels (JSON
// list of strings, index order), for IndexToString to find them: the
// frame's stand-in for Spark's nominal attribute metadata.
func LabelsMetadataKey(col string) string { return "ml.labels." + col }

// StringIndexer maps the values of string (or numeric) columns to label
// indices 0, 1, 2, ... as Spark ML's StringIndexer: by default the most
// frequent value gets 0 (stringOrderType "frequencyDesc"; also
// "frequencyAsc", "alphabetDesc", "alphabetAsc"), ties broken by the
// values in ascending alphabetical order as in Spark 3. A numeric column
// is indexed by its values' string form, as Spark casts them (Java's
// Double.toString: 1.0 is "1.0"; int64 1 is "1").
//
// Nulls are ignored when fitting. At transform time an unseen value or a
// null is handled as handleInvalid says: "error" (the default) fails
// naming the column, the row and the value; "skip" drops the row; "keep"
// gives it the index len(labels).
type StringIndexer struct {
	InputCol        string   `json:"inputCol,omitempty" yaml:"inputCol"`
	OutputCol       string   `json:"outputCol,omitempty" yaml:"outputCol"`
	InputCols       []string `json:"inputCols,omitempty" yaml:"inputCols"`
	OutputCols      []string `json:"outputCols,omitempty" yaml:"outputCols"`
	HandleInvalid   string   `json:"handleInvalid" yaml:"handleInvalid"`
	StringOrderType string   `json:"stringOrderType" yaml:"stringOrderType"`
}

// NewStringIndexer returns a StringIndexer with Spark's defaults
// (handleInvalid "error", stringOrderType "frequencyDesc") and no columns.
func NewStringIndexer() *StringIndexer {
	return &StringIndexer{HandleInvalid: InvalidError, StringOrderType: FrequencyDesc}
}

// Type returns "StringIndexer".
func (s *StringIndexer) Type() string { return "StringIndexer" }

// Copy returns a copy of s.
func (s *StringIndexer) Copy() ml.Estimator {
	c := *s
	c.InputCols, c.OutputCols = slices.Clone(s.InputCols), slices.Clone(s.OutputCols)
	return &c
}

// Fit counts the values of every input column on this rank, gathers the
// counts of every rank (AllGatherBytes) and orders the labels, so every
// rank gets the same labels.
func (s *StringIndexer) Fit(d ml.Data) (ml.Model, error) {
	const stage = "StringIndexer"
	if err := ml.CheckChoice(stage, "handleInvalid", s.HandleInvalid, InvalidError, InvalidSkip, InvalidKeep); err != nil {
		return nil, err
	}
	if err := ml.CheckChoice(stage, "stringOrderType", s.StringOrderType, FrequencyDesc, FrequencyAsc, AlphabetDesc, AlphabetAsc); err != nil {
		return nil, err
	}
	in, out, err := columnPairs(stage, s.InputCol, s.OutputCol, s.InputCols, s.OutputCols)
	if err != nil {
		return nil, err
	}
	counts := make([]map[string]int64, len(in))
	for k, col := range in {
		v, null, err := keys(stage, d.Frame, col)
		if err != nil {
			return nil, err
		}
		counts[k] = map[string]int64{}
		for i, x := range v {
			if null == nil || !null[i] {
				counts[k][x]++
			}
		}
	}
	total, err := gatherCounts(d.C(), counts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", stage, err)
	}
	labels := make([][]string, len(in))
	for k := range in {
		labels[k] = orderLabels(total[k], s.StringOrderType)
	}
	return &StringIndexerModel{InputCols: in, OutputCols: out, HandleInvalid: s.HandleInvalid, LabelsArray: labels, Labels: labels[0]}, nil
}

// orderLabels sorts the values counted in counts as stringOrderType says.
func orderLabels(counts map[string]int64, order string) []string {
	labels := make([]string, 0, len(counts))
	for x := range counts {
		labels = append(labels, x)
	}
	slices.SortFunc(labels, func(a, b string) int {
		switch order {
		case FrequencyDesc:
			if counts[a] != counts[b] {
				return cmpInt(counts[b], counts[a])
			}
		case FrequencyAsc:
			if counts[a] != counts[b] {
				return cmpInt(counts[a], counts[b])
			}
		case AlphabetDesc:
			return strings.Compare(b, a)
		}
		return strings.Compare(a, b)
	})
	return labels
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// StringIndexerModel is a fitted StringIndexer.
type StringIndexerModel struct {
	InputCols, OutputCols []string
	HandleInvalid         string
	// LabelsArray holds each input column's labels in index order: value
	// LabelsArray[k][i] gets index i.
	LabelsArray [][]string
	// Labels is LabelsArray[0], the labels of the first (usually only)
	// column, to map predictions back (see IndexToString).
	Labels []string
}

// Type returns "StringIndexerModel".
func (m *StringIndexerModel) Type() string { return "StringIndexerModel" }

// Transform adds the float64 index columns, and records each one's labels
// in the frame's metadata under LabelsMetadataKey(outputCol).
func (m *StringIndexerModel) Transform(f *data.Frame) (*data.Frame, error) {
	const stage = "StringIndexerModel"
	if err := ml.CheckChoice(stage, "handleInvalid", m.HandleInvalid, InvalidError, InvalidSkip, InvalidKeep); err != nil {
		return nil, err
	}
	n := f.Len()
	idx := make([][]float64, len(m.InputCols))
	keep := make([]bool, n)
	for i := range keep {
		keep[i] = true
	}
	for k, col := range m.InputCols {
		v, null, err := keys(stage, f, col)
		if err != nil {
			return nil, err
		}
		pos := make(map[string]int, len(m.LabelsArray[k]))
		for i, l := range m.LabelsArray[k] {
			pos[l] = i
		}
		idx[k] = make([]float64, n)
		for i, x := range v {
			isNull := null != nil && null[i]
			p, ok := pos[x]
			if ok && !isNull {
				idx[k][i] = float64(p)
				continue
			}
			switch m.HandleInvalid {
			case InvalidKeep:
				idx[k][i] = float64(len(m.LabelsArray[k]))
			case InvalidSkip:
				keep[i] = false
			default:
				if isNull {
					return nil, fmt.Errorf("%s: column %q, row %d: null value (set handleInvalid to \"skip\" or \"keep\")", stage, col, i+1)
				}
				return nil, fmt.Errorf("%s: column %q, row %d: unseen label %q (the model knows %d labels; set handleInvalid to \"skip\" or \"keep\")", stage, col, i+1, x, len(m.LabelsArray[k]))
			}
		}
	}
	rows := make([]int, 0, n)
	for i, k := range keep {
		if k {
			rows = append(rows, i)
		}
	}
	if len(rows) < n {
		f = f.Take(rows)
		for k := range idx {
			kept := make([]float64, len(rows))
			for j, i := range rows {
				kept[j] = idx[k][i]
			}
			idx[k] = kept
		}
	}
	for k, col := range m.OutputCols {
		var err error
		if f, err = f.With(ml.ScalarOut(col, idx[k])); err != nil {
			return nil, err
		}
		js, err := json.Marshal(m.LabelsArray[k])
		if err != nil {
			return nil, err
		}
		f = f.WithMetadata(LabelsMetadataKey(col), string(js))
	}
	return f, nil
}

type indexerParams struct {
	InputCols     []string   `json:"inputCols"`
	OutputCols    []string   `json:"outputCols"`
	HandleInvalid string     `json:"handleInvalid"`
	LabelsArray   [][]string `json:"labelsArray"`
}

// Encode keeps everything in the params (the labels are strings).
func (m *StringIndexerModel) Encode() (ml.Encoded, error) {
	return ml.Encoded{Params: indexerParams{m.InputCols, m.OutputCols, m.HandleInvalid, m.LabelsArray}}, nil
}

func decodeStringIndexerModel(raw json.RawMessage, _ map[string]ml.Array) (ml.Model, error) {
	var p indexerParams
	if err := ml.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	if len(p.InputCols) == 0 || len(p.OutputCols) != len(p.InputCols) || len(p.LabelsArray) != len(p.InputCols) {
		return nil, fmt.Errorf("%d inputCols, %d outputCols and %d label lists: want the same positive number", len(p.InputCols), len(p.OutputCols), len(p.LabelsArray))
	}
	for k := range p.LabelsArray {
		if p.LabelsArray[k] == nil {
			p.LabelsArray[k] = []string{}
		}
	}
	return &StringIndexerModel{InputCols: p.InputCols, OutputCols: p.OutputCols, HandleInvalid: p.HandleInvalid, LabelsArray: p.LabelsArray, Labels: p.LabelsArray[0]}, nil
}

// IndexToString maps label indices back to their labels, the inverse of
// StringIndexerModel (Spark ML's IndexToString): Labels if set, otherwise
// the labels StringIndexerModel recorded in the frame's metadata for
// inputCol. A null index stays null; an index that is not one of the
// labels' is an error naming the row.
type IndexToString struct {
	InputCol  string   `json:"inputCol" yaml:"inputCol"`
	OutputCol string   `json:"outputCol" yaml:"outputCol"`
	Labels    []string `json:"labels,omitempty" yaml:"labels"`
}

// NewIndexToString returns an IndexToString from inputCol to outputCol
// with the given labels (none: read them from the frame's metadata).
func NewIndexToString(inputCol, outputCol string, labels ...string) *IndexToString {
	return &IndexToString{InputCol: inputCol, OutputCol: outputCol, Labels: labels}
}

// Type returns "IndexToString".
func (t *IndexToString) Type() string { return "IndexToString" }

// Encode returns the parameters (IndexToString has no arrays).
func (t *IndexToString) Encode() (ml.Encoded, error) { return ml.Encoded{Params: t}, nil }

// Transform adds OutputCol, a string column.
func (t *IndexToString) Transform(f *data.Frame) (*data.Frame, error) {
	const stage = "IndexToString"
	if t.InputCol == "" || t.OutputCol == "" {
		return nil, fmt.Errorf("%s: inputCol and outputCol must be set", stage)
	}
	labels := t.Labels
	if len(labels) == 0 {
		js, ok := f.Metadata(LabelsMetadataKey(t.InputCol))
		if !ok {
			return nil, fmt.Errorf("%s: no labels: set labels, or transform with the StringIndexerModel that made column %q first", stage, t.InputCol)
		}
		if err := json.Unmarshal([]byte(js), &labels); err != nil {
			return nil, fmt.Errorf("%s: the labels recorded for column %q: %w", stage, t.InputCol, err)
		}
	}
	v, null, err := scalars(stage, f, t.InputCol)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(v))
	for i, x := range v {
		if null != nil && null[i] {
			continue
		}
		if x < 0 || x != math.Trunc(x) || x >= float64(len(labels)) {
			return nil, fmt.Errorf("%s: column %q, row %d: index %g is not one of the %d labels' (0 to %d)", stage, t.InputCol, i+1, x, len(labels), len(labels)-1)
		}
		out[i] = labels[int(x)]
	}
	var valid []bool
	if null != nil {
		valid = make([]bool, len(null))
		for i, n := range null {
			valid[i] = !n
		}
	}
	return f.With(data.NewColumn(t.OutputCol, out, valid))
}

func decodeIndexToString(raw json.RawMessage, _ map[string]ml.Array) (ml.Model, error) {
	t := &IndexToString{}
	if err := ml.DecodeParams(raw, t); err != nil {
		return nil, err
	}
	return t, nil
}

func init() {
	ml.RegisterStage("StringIndexer", func() ml.Stage { return NewStringIndexer() })
	ml.RegisterModel("StringIndexerModel", decodeStringIndexerModel)
	ml.RegisterStage("IndexToString", func() ml.Stage { return &IndexToString{} })
	ml.RegisterModel("IndexToString", decodeIndexToString)
}
