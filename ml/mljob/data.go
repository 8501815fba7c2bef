package mljob

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/fathom-ml/fathom/data"
	"github.com/fathom-ml/fathom/ml"
	"github.com/fathom-ml/fathom/ml/tune"
)

// ReadOptions say how ReadFrame reads CSV and Parquet.
type ReadOptions struct {
	// Columns, if set, reads only these columns, in this order.
	Columns []string
	CSV     CSVConfig
}

// isCSV says whether path names a CSV file by its extension.
func isCSV(path string) bool {
	p := strings.ToLower(strings.TrimSuffix(strings.ToLower(path), ".gz"))
	return strings.HasSuffix(p, ".csv") || strings.HasSuffix(p, ".tsv") || strings.HasSuffix(p, ".txt")
}

func (o ReadOptions) csv() data.CSVFrameOptions {
	opts := data.CSVFrameOptions{NoHeader: o.CSV.NoHeader, Missing: o.CSV.Missing, Select: o.Columns}
	if r := []rune(o.CSV.Delimiter); len(r) == 1 {
		opts.Comma = r[0]
	}
	if r := []rune(o.CSV.Comment); len(r) == 1 {
		opts.Comment = r[0]
	}
	return opts
}

// ReadFrame reads the rows of rank of size ranks from paths (CSV files,
// Parquet files or directories of Parquet parts), concatenated in order.
// When the paths hold at least size Parquet parts (and no Hive-style
// key=value directories), rank r reads only its contiguous run of parts,
// balanced by the row counts of the parts' footers (see partRange);
// otherwise every rank reads all the rows and keeps its contiguous share,
// rows n·r/size up to n·(r+1)/size. Either way the ranks' rows in rank
// order are the rows in file order.
func ReadFrame(paths []string, o ReadOptions, rank, size int) (*data.Frame, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("no data path")
	}
	var parts []string
	partsOnly := true
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		switch {
		case st.IsDir():
			ps, err := data.ParquetParts(p)
			if err != nil {
				return nil, err
			}
			for _, q := range ps {
				rel, _ := filepath.Rel(p, q)
				if strings.Contains(filepath.Dir(rel), "=") {
					partsOnly = false // Hive keys: read the data set whole
				}
			}
			parts = append(parts, ps...)
		case isCSV(p):
			partsOnly = false
		case data.IsParquetFile(p):
			parts = append(parts, p)
		default:
			return nil, fmt.Errorf("%s: unknown format (want .csv, .tsv, .csv.gz, .parquet or a directory of Parquet parts)", p)
		}
	}
	if partsOnly && size > 1 && len(parts) >= size {
		lo, hi, err := partRange(parts, rank, size)
		if err != nil {
			return nil, err
		}
		mine := parts[lo:hi]
		frames := make([]*data.Frame, len(mine))
		for i, p := range mine {
			f, err := data.ReadParquetFrame(p, data.ParquetFrameOptions{Columns: o.Columns})
			if err != nil {
				return nil, err
			}
			frames[i] = f
		}
		return Concat(frames...)
	}
	frames := make([]*data.Frame, len(paths))
	for i, p := range paths {
		var f *data.Frame
		var err error
		if isCSV(p) {
			f, err = data.ReadCSVFrame(p, o.csv())
		} else {
			f, err = data.ReadParquetFrame(p, data.ParquetFrameOptions{Columns: o.Columns})
		}
		if err != nil {
			return nil, err
		}
		frames[i] = f
	}
	f, err := Concat(frames...)
	if err != nil {
		return nil, err
	}
	return share(f, rank, size), nil
}

// share is rank's contiguous share of f's rows.
func share(f *data.Frame, rank, size int) *data.Frame {
	n := f.Len()
	return f.Slice(n*rank/size, n*(rank+1)/size)
}

// Concat appends frames with the same columns (names, kinds and vector
// widths) into one.
func Concat(frames ...*data.Frame) (*data.Frame, error) {
	if len(frames) == 0 {
		return nil, fmt.Errorf("no frames")
	}
	if len(frames) == 1 {
		return frames[0], nil
	}
	first := frames[0]
	cols := make([]data.Column, first.NumCols())
	for j, c0 := range first.Columns() {
		parts := make([]data.Column, len(frames))
		for i, f := range frames {
			c := f.Col(c0.Name())
			if c == nil || c.Kind() != c0.Kind() || f.NumCols() != first.NumCols() {
				return nil, fmt.Errorf("part %d has columns %v, part 1 %v (same names and types needed)", i+1, describe(f), describe(first))
			}
			parts[i] = c
		}
		c, err := concatColumns(parts)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", c0.Name(), err)
		}
		cols[j] = c
	}
	return data.NewFrame(cols...)
}

func describe(f *data.Frame) []string {
	var out []string
	for _, c := range f.Columns() {
		out = append(out, c.Name()+":"+c.Kind().String())
	}
	return out
}

func concatScalar[T data.Scalar](parts []data.Column) data.Column {
	var vals []T
	var valid []bool
	nulls := false
	for _, p := range parts {
		if p.NullCount() > 0 {
			nulls = true
		}
	}
	for _, p := range parts {
		c := p.(*data.ScalarColumn[T])
		vals = append(vals, c.Values()...)
		if nulls {
			for i := range c.Len() {
				valid = append(valid, !c.IsNull(i))
			}
		}
	}
	return data.NewColumn(parts[0].Name(), vals, valid)
}

func concatColumns(parts []data.Column) (data.Column, error) {
	switch parts[0].(type) {
	case *data.ScalarColumn[float64]:
		return concatScalar[float64](parts), nil
	case *data.ScalarColumn[float32]:
		return concatScalar[float32](parts), nil
	case *data.ScalarColumn[int64]:
		return concatScalar[int64](parts), nil
	case *data.ScalarColumn[string]:
		return concatScalar[string](parts), nil
	case *data.ScalarColumn[bool]:
		return concatScalar[bool](parts), nil
	case *data.VectorColumn:
		v0 := parts[0].(*data.VectorColumn)
		w, f32 := v0.Width(), v0.Float32s() != nil
		var x64 []float64
		var x32 []float32
		var valid, elem []bool
		nulls := false
		for _, p := range parts {
			v := p.(*data.VectorColumn)
			if v.Width() != w || (v.Float32s() != nil) != f32 {
				return nil, fmt.Errorf("vectors of width %d and %d (or of float32 and float64)", w, v.Width())
			}
			if v.NullCount() > 0 || v.ElemValid() != nil {
				nulls = true
			}
		}
		for _, p := range parts {
			v := p.(*data.VectorColumn)
			x64 = append(x64, v.Float64s()...)
			x32 = append(x32, v.Float32s()...)
			if nulls {
				for i := range v.Len() {
					valid = append(valid, !v.IsNull(i))
					for e := range w {
						elem = append(elem, !v.ElemNull(i, e))
					}
				}
			}
		}
		if f32 {
			return data.NewVectorColumn32(v0.Name(), w, x32, valid, elem), nil
		}
		return data.NewVectorColumn(v0.Name(), w, x64, valid, elem), nil
	}
	return nil, fmt.Errorf("cannot append columns of kind %s", parts[0].Kind())
}

// path resolves p against the config's directory.
func (c *Config) path(p string) string {
	if c.dir == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.dir, p)
}

func (c *Config) paths(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = c.path(p)
	}
	return out
}

// readData returns this rank's training and test rows (test nil when the
// config holds none out). With whole set every rank reads all the rows
// (the spread distribution); cm then only counts for nothing.
func (c *Config) readData(cm ml.Comm, whole bool) (train, test *data.Frame, err error) {
	rank, size := cm.Rank(), cm.Size()
	if whole {
		rank, size = 0, 1
	}
	o := ReadOptions{Columns: c.Data.Columns, CSV: c.Data.CSV}
	switch c.Data.Source {
	case "iris":
		f, err := data.ParseCSVFrame(bytes.NewReader(data.IrisCSV()), "iris.csv", o.csv())
		if err != nil {
			return nil, nil, err
		}
		train = share(f, rank, size)
	case "fashion-mnist":
		if train, err = fashionMNIST("train", rank, size); err != nil {
			return nil, nil, err
		}
		if c.Data.TestFraction == 0 && len(c.Data.Test) == 0 {
			if test, err = fashionMNIST("t10k", rank, size); err != nil {
				return nil, nil, err
			}
		}
	default:
		if train, err = ReadFrame(c.paths(c.Data.Train), o, rank, size); err != nil {
			return nil, nil, err
		}
	}
	if len(c.Data.Test) > 0 {
		if test, err = ReadFrame(c.paths(c.Data.Test), o, rank, size); err != nil {
			return nil, nil, err
		}
	}
	if c.Data.TestFraction > 0 {
		split := cm
		if whole {
			split = ml.Single
		}
		if train, test, err = HoldOut(train, split, c.Data.TestFraction, c.Data.Seed); err != nil {
			return nil, nil, err
		}
	}
	return train, test, nil
}

// HoldOut splits this rank's rows of a data set spread over c's ranks (in
// rank order) into training and test rows: a row is held out when
// tune.RowUniform(seed, its global index) < fraction, so the split is the
// same whatever the number of ranks. It is the split of a config's
// data.testFraction.
func HoldOut(f *data.Frame, c ml.Comm, fraction float64, seed int64) (train, test *data.Frame, err error) {
	off, err := ml.RowOffset(c, f.Len())
	if err != nil {
		return nil, nil, err
	}
	var tr, te []int
	for i := range f.Len() {
		if tune.RowUniform(seed, off+i) < fraction {
			te = append(te, i)
		} else {
			tr = append(tr, i)
		}
	}
	return f.Take(tr), f.Take(te), nil
}

// fashionMNIST returns rank's share of a Fashion-MNIST split ("train" or
// "t10k") as a frame: a float32 "features" vector column (784 pixels /
// 255) and a float64 "label" column of class indices.
func fashionMNIST(split string, rank, size int) (*data.Frame, error) {
	t, err := data.LoadFashionMNIST(split)
	if err != nil {
		return nil, fmt.Errorf("data.source fashion-mnist (install Debian's dataset-fashion-mnist or set FATHOM_DATA): %w", err)
	}
	lo, hi := t.Rows*rank/size, t.Rows*(rank+1)/size
	y := make([]float64, hi-lo)
	for i := range y {
		y[i] = float64(t.Labels[lo+i])
	}
	return data.NewFrame(data.NewVectorColumn32(ml.FeaturesCol, t.Cols, t.X[lo*t.Cols:hi*t.Cols], nil, nil),
		data.NewColumn(ml.LabelCol, y, nil))
}

// partRange returns the parts [lo, hi) of rank: contiguous runs, at least
// one part each, whose row counts (read from the Parquet footers) come
// closest to total·r/size at each boundary.
func partRange(parts []string, rank, size int) (lo, hi int, err error) {
	cum := make([]int64, len(parts)+1) // cum[k]: rows in parts [0, k)
	for i, p := range parts {
		pf, err := file.OpenParquetFile(p, false)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", p, err)
		}
		cum[i+1] = cum[i] + pf.NumRows()
		pf.Close()
	}
	return balancedBounds(cum, rank, size)
}

// balancedBounds splits the parts whose cumulative row counts are cum
// into size contiguous runs and returns rank's: boundary r is the part
// boundary nearest to total·r/size, kept strictly increasing so that
// every rank has a part (len(cum)−1 ≥ size).
func balancedBounds(cum []int64, rank, size int) (lo, hi int, err error) {
	p := len(cum) - 1
	if p < size {
		return 0, 0, fmt.Errorf("%d parts for %d ranks", p, size)
	}
	total := cum[p]
	bound := make([]int, size+1)
	bound[size] = p
	for r := 1; r < size; r++ {
		ideal := total * int64(r) / int64(size)
		k := sort.Search(p+1, func(k int) bool { return cum[k] >= ideal })
		if k > 0 && ideal-cum[k-1] <= cum[min(k, p)]-ideal {
			k--
		}
		bound[r] = min(max(k, bound[r-1]+1), p-(size-r))
	}
	return bound[rank], bound[rank+1], nil
}
