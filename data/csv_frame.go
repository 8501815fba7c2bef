package data

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// CSVFrameOptions says how to read a CSV file into a Frame. The zero value
// reads a comma-separated file with a header row, every column, and infers
// the column types.
type CSVFrameOptions struct {
	// Comma is the field delimiter; 0 means ','.
	Comma rune
	// Comment, if not 0, starts a comment line that is skipped.
	Comment rune
	// NoHeader says the first row is data; columns are then named "c1",
	// "c2", … (1-based).
	NoHeader bool
	// Select, if set, lists the columns to read, in this order; otherwise
	// every column is read, in file order.
	Select []string
	// Missing lists the cell values that mean "missing" (null); nil means
	// DefaultMissing(). Cells are compared after trimming spaces, without
	// regard to case.
	Missing []string
	// Types fixes the type of some columns by name: Float64, Float32,
	// Int64, String or Bool (strconv.ParseBool's spellings). Other columns
	// are inferred: Float64 when every present cell is a number, otherwise
	// String.
	Types map[string]Kind
}

// ReadCSVFrame reads a whole CSV file into a Frame. A gzip-compressed file is
// recognised by its magic bytes. Cells are trimmed of surrounding spaces;
// missing cells (see CSVFrameOptions.Missing) are nulls. Errors name the
// file, the line and the column, as ReadCSV's do.
func ReadCSVFrame(path string, opts CSVFrameOptions) (*Frame, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := maybeGunzip(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ParseCSVFrame(r, path, opts)
}

// ParseCSVFrame reads CSV from r into a Frame; name is used in error
// messages.
//
// The reader keeps the cells of the selected columns as strings until the
// end of the input, when every column's type is known, and then converts
// them; peak memory is about the size of the input plus the columns built.
func ParseCSVFrame(r io.Reader, name string, opts CSVFrameOptions) (*Frame, error) {
	s, err := newCSVScanner(r, name, CSVOptions{Comma: opts.Comma, Comment: opts.Comment, NoHeader: opts.NoHeader, Missing: opts.Missing})
	if err != nil {
		return nil, err
	}
	// Resolve the columns to read.
	pos := make(map[string]int, len(s.names))
	for j, n := range s.names {
		if _, dup := pos[n]; dup {
			return nil, fmt.Errorf("%s: column name %q appears twice", name, n)
		}
		pos[n] = j
	}
	var src []int // file column of each frame column
	if len(opts.Select) > 0 {
		seen := map[int]bool{}
		for _, n := range opts.Select {
			j, ok := pos[n]
			if !ok {
				return nil, fmt.Errorf("%s: selected column %q not found (columns: %s)", name, n, strings.Join(s.names, ", "))
			}
			if seen[j] {
				return nil, fmt.Errorf("%s: column %q is selected twice", name, n)
			}
			seen[j] = true
			src = append(src, j)
		}
	} else {
		src = make([]int, len(s.names))
		for j := range src {
			src[j] = j
		}
	}
	for n, k := range opts.Types {
		if _, ok := pos[n]; !ok {
			return nil, fmt.Errorf("%s: typed column %q not found (columns: %s)", name, n, strings.Join(s.names, ", "))
		}
		switch k {
		case Float64, Float32, Int64, String, Bool:
		default:
			return nil, fmt.Errorf("%s: column %q: a CSV column cannot be read as %s", name, n, k)
		}
	}
	// A kept cell would pin its whole record's string; clone cells when
	// only some columns are kept.
	clone := len(src) < len(s.names)

	cells := make([][]string, len(src))
	var lines []int // line of each row, for errors
	for {
		var rec []string
		if s.pending != nil {
			rec, s.pending = s.pending, nil
		} else {
			rec, err = s.cr.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, s.csvError(err)
			}
		}
		lines = append(lines, s.lineOf(0))
		for k, j := range src {
			cell := strings.TrimSpace(rec[j])
			if clone {
				cell = strings.Clone(cell)
			}
			cells[k] = append(cells[k], cell)
		}
	}

	cols := make([]Column, len(src))
	for k, j := range src {
		c, err := s.csvColumn(s.names[j], j, cells[k], lines, opts.Types[s.names[j]])
		if err != nil {
			return nil, err
		}
		cols[k] = c
		cells[k] = nil // let the strings of converted columns go
	}
	f, err := NewFrame(cols...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(cols) == 0 {
		f.rows = len(lines)
	}
	return f, nil
}

// csvColumn converts the cells of file column j (0-based) to a column of
// kind (0: inferred).
func (s *CSVScanner) csvColumn(name string, j int, cells []string, lines []int, kind Kind) (Column, error) {
	n := len(cells)
	var valid []bool
	for i, cell := range cells {
		if s.isNA[strings.ToLower(cell)] {
			if valid == nil {
				valid = make([]bool, n)
				for p := range i {
					valid[p] = true
				}
			}
			continue
		}
		if valid != nil {
			valid[i] = true
		}
	}
	present := func(i int) bool { return valid == nil || valid[i] }
	cellErr := func(i int, msg string) error {
		return fmt.Errorf("%s:%d: column %q (%d): %s", s.name, lines[i], name, j+1, msg)
	}
	if kind == 0 {
		kind = Float64
		for i, cell := range cells {
			if present(i) {
				if _, err := strconv.ParseFloat(cell, 64); err != nil {
					var ne *strconv.NumError
					if !errors.As(err, &ne) || ne.Err != strconv.ErrRange {
						kind = String
						break
					}
				}
			}
		}
	}
	switch kind {
	case String:
		values := make([]string, n)
		for i, cell := range cells {
			if present(i) {
				values[i] = cell
			}
		}
		return NewColumn(name, values, valid), nil
	case Float64:
		values := make([]float64, n)
		for i, cell := range cells {
			if !present(i) {
				continue
			}
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil {
				var ne *strconv.NumError
				if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
					return nil, cellErr(i, fmt.Sprintf("%q is outside the float64 range", cell))
				}
				return nil, cellErr(i, fmt.Sprintf("cannot parse %q as a number", cell))
			}
			values[i] = v
		}
		return NewColumn(name, values, valid), nil
	case Float32:
		values := make([]float32, n)
		for i, cell := range cells {
			if !present(i) {
				continue
			}
			v, err := parseFloat32(cell)
			if err != nil {
				return nil, cellErr(i, err.Error())
			}
			values[i] = v
		}
		return NewColumn(name, values, valid), nil
	case Int64:
		values := make([]int64, n)
		for i, cell := range cells {
			if !present(i) {
				continue
			}
			v, err := strconv.ParseInt(cell, 10, 64)
			if err != nil {
				return nil, cellErr(i, fmt.Sprintf("cannot parse %q as an integer", cell))
			}
			values[i] = v
		}
		return NewColumn(name, values, valid), nil
	case Bool:
		values := make([]bool, n)
		for i, cell := range cells {
			if !present(i) {
				continue
			}
			v, err := strconv.ParseBool(cell)
			if err != nil {
				return nil, cellErr(i, fmt.Sprintf("cannot parse %q as a boolean", cell))
			}
			values[i] = v
		}
		return NewColumn(name, values, valid), nil
	}
	return nil, fmt.Errorf("%s: column %q: a CSV column cannot be read as %s", s.name, name, kind)
}
