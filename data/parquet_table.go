package data

import (
	"errors"
	"fmt"
	"slices"
)

// readParquetTable reads the files of ds (one, or the partitions of where)
// into a Frame of the columns opts needs and converts it to a Table. Each
// file's columns are checked against opts before anything is decoded;
// errors about a row name the file it is in and its row within that file.
func readParquetTable(where string, ds *parquetDataset, opts ParquetOptions) (*Table, error) {
	if _, err := newClassEncoder(opts.Classes); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	fopts := ParquetFrameOptions{BatchSize: opts.BatchSize}
	if fopts.BatchSize <= 0 {
		fopts.BatchSize = 1 << 16
	}
	var cols []*frameColumnBuilder
	var meta map[string]string
	starts := make([]int, len(ds.parts)) // first frame row of each file
	for k, part := range ds.parts {
		if k > 0 && len(cols) > 0 {
			starts[k] = cols[0].rows
		}
		plan := func(avail []parquetColumn) ([]int, error) {
			return planParquetTable(part.path, avail, opts)
		}
		var err error
		cols, meta, err = readParquetFrameFile(part, ds.keys, fopts, plan, cols, meta)
		if err != nil {
			return nil, err
		}
	}
	f, err := builtFrame(cols, meta, ds.parts[len(ds.parts)-1].path, where)
	if err != nil {
		return nil, err
	}
	t, err := f.table(TableOptions{
		Label: opts.Label, LabelKind: opts.LabelKind, Classes: opts.Classes,
		Features: opts.Select, Impute: opts.Impute, parquetCompat: true,
	})
	if err != nil {
		var re *rowError
		if errors.As(err, &re) {
			k := max(0, sortSearchLast(starts, re.row))
			return nil, fmt.Errorf("%s: row %d: %s", ds.parts[k].path, re.row-starts[k]+1, re.msg)
		}
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return t, nil
}

// sortSearchLast returns the last index k with starts[k] <= row.
func sortSearchLast(starts []int, row int) int {
	k, found := slices.BinarySearch(starts, row)
	if found {
		for k+1 < len(starts) && starts[k+1] == row { // files without rows
			k++
		}
		return k
	}
	return k - 1
}

// planParquetTable resolves opts against the columns a file offers and
// checks their types, returning the columns to read: the features in order,
// then the label.
func planParquetTable(path string, avail []parquetColumn, opts ParquetOptions) ([]int, error) {
	names := make([]string, len(avail))
	for j, c := range avail {
		names[j] = c.name
	}
	isVector := func(j int) bool { return vectorWidth(avail[j].typ) >= 0 }
	sel, err := selectColumns(names, opts.Label, 0, collapseVectorNames(opts.Select, names, isVector), opts.Ignore)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if sel.label < 0 && (opts.LabelKind != LabelClass || len(opts.Classes) > 0) {
		return nil, fmt.Errorf("%s: label options given but no label column", path)
	}
	for _, j := range sel.features {
		c := avail[j]
		if vectorWidth(c.typ) >= 0 {
			// A list of numbers (an embedding, an image) is a vector
			// feature: one Table column per element.
			if !c.listOfLeaf() {
				return nil, fmt.Errorf("%s: column %q has type %s; a vector feature must be a list of numbers", path, c.name, c.typ)
			}
			continue
		}
		if !c.leaf() {
			return nil, fmt.Errorf("%s: column %q has nested type %s; only numbers, booleans and lists of numbers can be features", path, c.name, c.typ)
		}
		if !isNumericType(c.typ) {
			return nil, fmt.Errorf("%s: column %q has type %s; features must be numbers or booleans", path, c.name, c.typ)
		}
	}
	read := slices.Clone(sel.features)
	if sel.label >= 0 {
		c := avail[sel.label]
		if !c.leaf() {
			return nil, fmt.Errorf("%s: label column %q has nested type %s", path, c.name, c.typ)
		}
		if err := checkLabelType(c.typ, opts.LabelKind); err != nil {
			return nil, fmt.Errorf("%s: label column %q: %v", path, c.name, err)
		}
		read = append(read, sel.label)
	}
	if len(read) == 0 {
		return nil, fmt.Errorf("%s: no columns selected", path)
	}
	return read, nil
}
