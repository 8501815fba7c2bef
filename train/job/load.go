package job

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/metrics"
	"github.com/fathom-ml/fathom/modelfile"
)

// Splits are the tables of a run: Train for the optimizer, Eval scored
// after every epoch (the validation split, or the test split when there
// is no validation split) and Test scored at the end.
type Splits struct {
	Train, Eval, Test *data.Table
	// EvalIsTest says Eval is the test split.
	EvalIsTest bool
	// Scaler is the standardization fitted on Train, or nil.
	Scaler *data.Standardizer
	// ImputeMeans, with impute: mean, holds the mean of each feature column
	// of the training data file: the values its missing cells were filled
	// with (the mean of a column is unchanged by filling it with its mean).
	ImputeMeans []float64
	// TrainedOn records the source, the split and the fingerprint of Train
	// (before standardization).
	TrainedOn *modelfile.TrainingData
}

// LoadData reads the data a config names, splits it and standardizes it.
func (c *Config) LoadData() (*Splits, error) {
	task, err := c.task()
	if err != nil {
		return nil, err
	}
	d := &c.Data
	stratify := task == metrics.Classification
	if d.Stratify != nil {
		stratify = *d.Stratify && task == metrics.Classification
	}
	testFrac := 0.2
	if d.TestFraction != nil {
		testFrac = *d.TestFraction
	}
	splitSeed := c.Seed
	if d.SplitSeed != nil {
		splitSeed = *d.SplitSeed
	}
	var all, test *data.Table
	switch d.Source {
	case "iris":
		if task != metrics.Classification {
			return nil, fmt.Errorf("data: iris is a classification data set, but loss %q is a regression loss", c.Loss.Type)
		}
		all, err = data.Iris()
	case "fashion-mnist", "mnist":
		if task != metrics.Classification {
			return nil, fmt.Errorf("data: %s is a classification data set, but loss %q is a regression loss", d.Source, c.Loss.Type)
		}
		dir := c.dataPath(d.Train)
		opts := data.MNISTOptions{}
		if d.Source == "fashion-mnist" {
			opts.Classes = data.FashionMNISTClasses()
			if dir == "" {
				dir = data.FashionMNISTDir()
			}
		} else if dir == "" {
			return nil, fmt.Errorf("data.train: the mnist source needs the directory of the MNIST files")
		}
		if _, serr := os.Stat(dir); serr != nil {
			return nil, fmt.Errorf("data: %s directory: %w (set data.train or FATHOM_DATA)", d.Source, serr)
		}
		if all, err = data.LoadMNIST(dir, "train", opts); err == nil {
			test, err = data.LoadMNIST(dir, "t10k", opts)
		}
	case "csv", "parquet":
		read := func(p string) (*data.Table, error) { return c.readTable(p, task) }
		if all, err = read(c.dataPath(d.Train)); err == nil && d.Test != "" {
			test, err = read(c.dataPath(d.Test))
		}
	case "idx":
		all, err = readIDXPair(c.dataPath(d.Images), c.dataPath(d.Labels))
		if err == nil && d.TestImages != "" {
			test, err = readIDXPair(c.dataPath(d.TestImages), c.dataPath(d.TestLabels))
		}
	default:
		return nil, fmt.Errorf("data.source: unknown source %q", d.Source)
	}
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	if all.Rows == 0 {
		return nil, fmt.Errorf("data: the %s data has no rows", d.Source)
	}
	s := &Splits{}
	if d.Impute == "mean" && (d.Source == "csv" || d.Source == "parquet") {
		s.ImputeMeans = columnMeans(all)
	}
	if test == nil {
		parts, err := data.Split(all, data.SplitOptions{Train: 1 - testFrac - d.Validation*(1-testFrac),
			Validation: d.Validation * (1 - testFrac), Seed: splitSeed, Stratify: stratify})
		if err != nil {
			return nil, fmt.Errorf("data: %w", err)
		}
		s.Train, s.Eval, s.Test = parts.Train, parts.Validation, parts.Test
	} else {
		if test.Cols != all.Cols {
			return nil, fmt.Errorf("data: the test data has %d feature columns, the training data %d", test.Cols, all.Cols)
		}
		s.Train, s.Test = all, test
		if d.Validation > 0 {
			parts, err := data.Split(all, data.SplitOptions{Train: 1 - d.Validation, Validation: d.Validation, Seed: splitSeed, Stratify: stratify})
			if err != nil {
				return nil, fmt.Errorf("data: %w", err)
			}
			s.Train, s.Eval = parts.Train, parts.Validation
		}
	}
	if d.Validation > 0 && (s.Eval == nil || s.Eval.Rows == 0) {
		return nil, fmt.Errorf("data.validation: %g of %d rows leaves no validation rows", d.Validation, all.Rows)
	}
	if s.Eval == nil || s.Eval.Rows == 0 {
		s.Eval, s.EvalIsTest = s.Test, true
	}
	if s.Train.Rows == 0 {
		return nil, fmt.Errorf("data: no training rows are left after holding out test %g and validation %g", testFrac, d.Validation)
	}
	if task == metrics.Classification && s.Test.Classes != nil && len(s.Test.Classes) != len(s.Train.Classes) {
		return nil, fmt.Errorf("data: the test data has %d classes, the training data %d", len(s.Test.Classes), len(s.Train.Classes))
	}
	s.TrainedOn = &modelfile.TrainingData{Source: d.Source, Path: absPath(c.dataPath(d.Train)), TestPath: absPath(c.dataPath(d.Test)),
		Test: testFrac, Validation: d.Validation, SplitSeed: splitSeed, Stratify: stratify,
		TrainRows: s.Train.Rows, TrainSHA256: modelfile.Fingerprint(s.Train)}
	if test != nil {
		s.TrainedOn.Test = 0
	}
	if d.Standardize {
		s.Scaler = data.FitStandardizer(s.Train)
		tables := []*data.Table{s.Train, s.Test}
		if !s.EvalIsTest {
			tables = append(tables, s.Eval)
		}
		for _, t := range tables {
			if err := s.Scaler.Apply(t); err != nil {
				return nil, fmt.Errorf("data: %w", err)
			}
		}
	}
	return s, nil
}

// columnMeans returns the mean of every feature column of t.
func columnMeans(t *data.Table) []float64 {
	sum := make([]float64, t.Cols)
	for i := range t.Rows {
		for j, v := range t.Row(i) {
			sum[j] += float64(v)
		}
	}
	for j := range sum {
		sum[j] /= float64(max(t.Rows, 1))
	}
	return sum
}

// absPath returns p made absolute ("" stays "").
func absPath(p string) string {
	if p == "" {
		return ""
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// readTable reads a CSV or Parquet source file.
func (c *Config) readTable(path string, task metrics.Task) (*data.Table, error) {
	d := &c.Data
	kind := data.LabelClass
	if task == metrics.Regression {
		kind = data.LabelNumeric
	}
	if d.Label == "" {
		return nil, fmt.Errorf("data.label: name the target column of %s", path)
	}
	impute := data.MissingError
	if d.Impute == "mean" {
		impute = data.MissingMean
	}
	if d.Source == "csv" {
		var comma rune
		if d.Delimiter != "" {
			comma = []rune(d.Delimiter)[0]
		}
		t, err := data.ReadCSV(path, data.CSVOptions{Comma: comma, Label: d.Label, LabelKind: kind,
			Select: d.Columns, Ignore: d.Ignore, Impute: impute})
		return t, missingHint(err)
	}
	opts := data.ParquetOptions{Label: d.Label, LabelKind: kind, Select: d.Columns, Ignore: d.Ignore, Impute: impute}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		t, err := data.ReadParquetDir(path, opts)
		return t, missingHint(err)
	}
	t, err := data.ReadParquet(path, opts)
	return t, missingHint(err)
}

// missingHint rewrites the readers' advice about a missing value, which
// names package data's Go identifiers, in the config's terms.
func missingHint(err error) error {
	return modelfile.ReplaceHint(err, "set Impute to MissingMean to fill it with the column mean",
		"set impute: mean under data: to fill it with the column mean")
}

// readIDXPair reads an IDX file of examples (first dim: count) and one of
// integer class labels into a table. Bytes are scaled to [0, 1].
func readIDXPair(images, labels string) (*data.Table, error) {
	if labels == "" {
		return nil, fmt.Errorf("%s: the labels file is missing", images)
	}
	x, err := data.ReadIDX(images)
	if err != nil {
		return nil, err
	}
	y, err := data.ReadIDX(labels)
	if err != nil {
		return nil, err
	}
	if len(x.Dims) < 1 || len(y.Dims) != 1 {
		return nil, fmt.Errorf("%s, %s: want examples [n, ...] and labels [n], have %v and %v", images, labels, x.Dims, y.Dims)
	}
	n := x.Dims[0]
	if y.Dims[0] != n {
		return nil, fmt.Errorf("%s has %d examples but %s has %d labels", images, n, labels, y.Dims[0])
	}
	scale := float32(1)
	if x.Type == data.IDXUint8 {
		scale = 1.0 / 255
	}
	t := &data.Table{Rows: n, Cols: x.Len() / max(n, 1), X: x.AsFloat32(scale), LabelName: "label", Labels: make([]int64, n)}
	if len(x.Dims) > 2 {
		t.FeatureShape = append([]int(nil), x.Dims[1:]...)
	}
	vals := y.AsFloat32(1)
	maxLabel := int64(0)
	for i, v := range vals {
		l := int64(v)
		if float32(l) != v || l < 0 || l > 1<<20 {
			return nil, fmt.Errorf("%s: label %v of item %d is not a class index", labels, v, i+1)
		}
		t.Labels[i] = l
		maxLabel = max(maxLabel, l)
	}
	for k := range maxLabel + 1 {
		t.Classes = append(t.Classes, strconv.FormatInt(k, 10))
	}
	return t, nil
}
