package data

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// CSVOptions says how to read a CSV file. The zero value reads a
// comma-separated file with a header row, all columns as numeric features and
// no label.
//
// Columns are referred to by name. A file without a header (NoHeader) has its
// columns named "c1", "c2", ... (1-based), so the same options work for both.
type CSVOptions struct {
	// Comma is the field delimiter; 0 means ','.
	Comma rune
	// Comment, if not 0, starts a comment line that is skipped.
	Comment rune
	// NoHeader says the first row is data, not column names.
	NoHeader bool

	// Label names the label column ("" for none), unless LabelIndex is set.
	Label string
	// LabelIndex, if not 0, picks the label column by 1-based position;
	// -1 means the last column.
	LabelIndex int
	// LabelKind says whether the label is a class (the default) or a number.
	LabelKind LabelKind
	// Classes, if set, fixes the class list of a class label: its order gives
	// the class indices and any other value is an error. Otherwise classes are
	// collected from the data and sorted (numerically if all are numbers).
	Classes []string

	// Select, if set, lists the feature columns to read, in this order.
	// Otherwise every column but the label is a feature.
	Select []string
	// Ignore lists columns to leave out.
	Ignore []string

	// Missing lists the cell values that mean "missing"; nil means
	// DefaultMissing(). Use an empty non-nil slice to treat nothing as missing.
	Missing []string
	// Impute says what to do with a missing feature value. A missing label is
	// always an error.
	Impute Impute
}

// ReadCSV reads a whole CSV file into a Table. A gzip-compressed file is
// recognised by its magic bytes and decompressed on the fly.
//
// Errors name the file, the line (1-based, the header being line 1) and the
// column (by name and 1-based position), for example
//
//	iris.csv:17: column "sepal_width" (2): cannot parse "abc" as a number
func ReadCSV(path string, opts CSVOptions) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := maybeGunzip(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ParseCSV(r, path, opts)
}

// maybeGunzip returns a reader of r's content, decompressed if it starts with
// the gzip magic bytes 1f 8b.
func maybeGunzip(r io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return zr, nil
	}
	return br, nil
}

// ParseCSV reads CSV from r into a Table; name is used in error messages.
func ParseCSV(r io.Reader, name string, opts CSVOptions) (*Table, error) {
	s, err := newCSVScanner(r, name, opts)
	if err != nil {
		return nil, err
	}
	t, err := s.read(-1)
	if err == io.EOF {
		t, err = s.empty(), nil
	}
	if err != nil {
		return nil, err
	}
	if opts.Impute == MissingMean {
		if err := s.missing.imputeMean(t, s.describeFeature); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if t.Labels != nil {
		t.Classes = s.classes.sortClasses(t.Labels)
	}
	return t, nil
}

// CSVScanner reads a CSV file in batches of rows, so that a file larger than
// memory can be processed piece by piece. Class indices stay the same across
// batches: with CSVOptions.Classes they follow that list, otherwise classes are
// numbered in order of first appearance and each batch's Classes holds every
// class seen so far.
type CSVScanner struct {
	name    string
	opts    CSVOptions
	cr      *csv.Reader
	names   []string // all column names of the file
	sel     selection
	missing missingCells
	classes *classEncoder
	isNA    map[string]bool
	pending []string // a first data row read while looking for the width (NoHeader)
	lineOf  func(field int) int
	done    bool
}

// NewCSVScanner reads the header of r and returns a scanner over its rows.
// Mean imputation needs the whole file, so opts.Impute must be MissingError.
func NewCSVScanner(r io.Reader, name string, opts CSVOptions) (*CSVScanner, error) {
	if opts.Impute == MissingMean {
		return nil, fmt.Errorf("%s: mean imputation needs the whole file; use ReadCSV", name)
	}
	return newCSVScanner(r, name, opts)
}

// skipBOM returns a buffered reader over r past a leading UTF-8 byte
// order mark, if any.
func skipBOM(r io.Reader) *bufio.Reader {
	br := bufio.NewReader(r)
	if bom, _ := br.Peek(3); string(bom) == "\ufeff" {
		br.Discard(3)
	}
	return br
}

// missingSet returns the cell values that mean "missing", trimmed and
// lower-cased, as a set; nil means DefaultMissing().
func missingSet(missing []string) map[string]bool {
	if missing == nil {
		missing = defaultMissing
	}
	set := make(map[string]bool, len(missing))
	for _, m := range missing {
		set[strings.ToLower(strings.TrimSpace(m))] = true
	}
	return set
}

func newCSVScanner(r io.Reader, name string, opts CSVOptions) (*CSVScanner, error) {
	cr := csv.NewReader(skipBOM(r))
	if opts.Comma != 0 {
		cr.Comma = opts.Comma
	}
	cr.Comment = opts.Comment
	cr.ReuseRecord = true
	s := &CSVScanner{name: name, opts: opts, cr: cr}
	s.lineOf = func(field int) int { line, _ := cr.FieldPos(field); return line }

	classes, err := newClassEncoder(opts.Classes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s.classes = classes
	s.isNA = missingSet(opts.Missing)

	first, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: the file is empty", name)
	}
	if err != nil {
		return nil, s.csvError(err)
	}
	if opts.NoHeader {
		s.names = make([]string, len(first))
		for i := range first {
			s.names[i] = "c" + strconv.Itoa(i+1)
		}
		s.pending = append([]string(nil), first...)
	} else {
		s.names = make([]string, len(first))
		for i, n := range first {
			s.names[i] = strings.TrimSpace(n)
		}
	}
	s.sel, err = selectColumns(s.names, opts.Label, opts.LabelIndex, opts.Select, opts.Ignore)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if s.sel.label < 0 && (opts.LabelKind != LabelClass || len(opts.Classes) > 0) {
		return nil, fmt.Errorf("%s: label options given but no label column", name)
	}
	return s, nil
}

// Columns returns the names of the feature columns the scanner produces.
func (s *CSVScanner) Columns() []string {
	out := make([]string, len(s.sel.features))
	for k, j := range s.sel.features {
		out[k] = s.names[j]
	}
	return out
}

// Next reads up to maxRows rows (maxRows > 0) and returns them as a Table. At
// the end of the input it returns io.EOF.
func (s *CSVScanner) Next(maxRows int) (*Table, error) {
	if maxRows <= 0 {
		return nil, fmt.Errorf("%s: CSVScanner.Next: maxRows must be positive, got %d", s.name, maxRows)
	}
	t, err := s.read(maxRows)
	if err != nil {
		return nil, err
	}
	if t.Labels != nil {
		t.Classes = append([]string(nil), s.classes.classes...)
	}
	return t, nil
}

// empty returns a table with the scanner's columns and no rows.
func (s *CSVScanner) empty() *Table {
	t := &Table{Cols: len(s.sel.features), X: []float32{}, Columns: s.Columns()}
	if s.sel.label >= 0 {
		t.LabelName = s.names[s.sel.label]
		if s.opts.LabelKind == LabelNumeric {
			t.Y = []float32{}
		} else {
			t.Labels = []int64{}
		}
	}
	return t
}

// read reads up to maxRows rows (all when maxRows < 0); io.EOF if none are left.
func (s *CSVScanner) read(maxRows int) (*Table, error) {
	if s.done {
		return nil, io.EOF
	}
	t := s.empty()
	for maxRows < 0 || t.Rows < maxRows {
		var rec []string
		var err error
		if s.pending != nil {
			rec, s.pending = s.pending, nil
			// The first row was read before the scanner existed; FieldPos
			// still refers to it because nothing was read since.
		} else {
			rec, err = s.cr.Read()
		}
		if err == io.EOF {
			s.done = true
			break
		}
		if err != nil {
			return nil, s.csvError(err)
		}
		if err := s.appendRow(t, rec); err != nil {
			return nil, err
		}
	}
	if t.Rows == 0 && s.done {
		return nil, io.EOF
	}
	return t, nil
}

// appendRow parses one record into t.
func (s *CSVScanner) appendRow(t *Table, rec []string) error {
	for _, j := range s.sel.features {
		cell := strings.TrimSpace(rec[j])
		if s.isNA[strings.ToLower(cell)] {
			if s.opts.Impute != MissingMean {
				return s.cellError(j, fmt.Sprintf("missing value %q (set Impute to MissingMean to fill it with the column mean)", rec[j]))
			}
			s.missing.pos = append(s.missing.pos, len(t.X))
			t.X = append(t.X, float32(math.NaN()))
			continue
		}
		v, err := parseFloat32(cell)
		if err != nil {
			return s.cellError(j, err.Error())
		}
		t.X = append(t.X, v)
	}
	if s.sel.label >= 0 {
		j := s.sel.label
		cell := strings.TrimSpace(rec[j])
		if s.isNA[strings.ToLower(cell)] {
			return s.cellError(j, fmt.Sprintf("missing label %q", rec[j]))
		}
		if s.opts.LabelKind == LabelNumeric {
			v, err := parseFloat32(cell)
			if err != nil {
				return s.cellError(j, err.Error())
			}
			t.Y = append(t.Y, v)
		} else {
			idx, ok := s.classes.encode(cell)
			if !ok {
				return s.cellError(j, s.classes.unknownClass(cell))
			}
			t.Labels = append(t.Labels, idx)
		}
	}
	t.Rows++
	return nil
}

// parseFloat32 parses a number, rejecting values outside the float32 range
// and the non-finite spellings strconv accepts ("inf", "Infinity", "-inf",
// "nan"; NaN is usually caught before as a missing-value spelling): a
// single infinity turns a standardized column into NaNs.
func parseFloat32(cell string) (float32, error) {
	v, err := strconv.ParseFloat(cell, 32)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			return 0, fmt.Errorf("%q is outside the float32 range", cell)
		}
		return 0, fmt.Errorf("cannot parse %q as a number", cell)
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("%q is not a finite number", cell)
	}
	return float32(v), nil
}

// cellError formats an error about column j of the current record.
func (s *CSVScanner) cellError(j int, msg string) error {
	what := "column"
	if j == s.sel.label {
		what = "label column"
	}
	return fmt.Errorf("%s:%d: %s %q (%d): %s", s.name, s.lineOf(j), what, s.names[j], j+1, msg)
}

// describeFeature names feature column k for imputation errors.
func (s *CSVScanner) describeFeature(k int) string {
	j := s.sel.features[k]
	return fmt.Sprintf("%q (%d)", s.names[j], j+1)
}

// csvError turns an encoding/csv error into one that names the file and line.
func (s *CSVScanner) csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			return fmt.Errorf("%s:%d: row has a different number of fields than the header (%d)", s.name, pe.Line, len(s.names))
		}
		return fmt.Errorf("%s:%d:%d: %v", s.name, pe.Line, pe.Column, pe.Err)
	}
	return fmt.Errorf("%s: %w", s.name, err)
}
