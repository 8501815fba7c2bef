package data

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
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
// Numbers are parsed as the rows arrive. An inferred column also keeps its
// cells' text, packed in one buffer, until the end of the input decides its
// type (a string column is then built from that buffer without copying each
// cell), so peak memory is about the size of the input plus the columns
// built.
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
	cols := make([]*csvColumnBuilder, len(src))
	for k, j := range src {
		cols[k] = &csvColumnBuilder{s: s, j: j, kind: opts.Types[s.names[j]]}
		if cols[k].kind == 0 {
			cols[k].numeric = true
		}
	}
	rows := 0
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
		for _, c := range cols {
			if err := c.add(rec[c.j], rows); err != nil {
				return nil, err
			}
		}
		rows++
	}
	out := make([]Column, len(cols))
	for k, c := range cols {
		col, err := c.column(rows)
		if err != nil {
			return nil, err
		}
		out[k] = col
		cols[k] = nil // let the text of a converted column go
	}
	f, err := NewFrame(out...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f.rows = rows
	return f, nil
}

// csvColumnBuilder accumulates one column of a CSV Frame.
type csvColumnBuilder struct {
	s    *CSVScanner
	j    int  // file column, 0-based
	kind Kind // fixed type, or 0 while inferring

	// Inference: numeric says every present cell so far is a number
	// (parsed into f64); text holds every cell's text, each preceded by
	// its length as a uvarint, in case the column turns out to be strings.
	numeric  bool
	text     []byte
	rangeErr error // the first number out of the float64 range

	f64   []float64
	f32   []float32
	i64   []int64
	b     []bool
	valid []bool // nil until a missing cell
}

// add appends the cell of row (0-based).
func (c *csvColumnBuilder) add(raw string, row int) error {
	cell := strings.TrimSpace(raw)
	missing := c.s.isNA[strings.ToLower(cell)]
	if missing {
		if c.valid == nil {
			c.valid = make([]bool, row, max(2*row, 16))
			for i := range c.valid {
				c.valid[i] = true
			}
		}
		c.valid = appendDoubling(c.valid, false)
	} else if c.valid != nil {
		c.valid = appendDoubling(c.valid, true)
	}
	switch c.kind {
	case 0, String:
		c.text = binary.AppendUvarint(c.text, uint64(len(cell)))
		c.text = appendDoubling(c.text, []byte(cell)...)
		if c.kind == String || !c.numeric {
			return nil
		}
		var v float64
		if !missing {
			var err error
			v, err = strconv.ParseFloat(cell, 64)
			if err != nil {
				var ne *strconv.NumError
				if !errors.As(err, &ne) || ne.Err != strconv.ErrRange {
					c.numeric, c.f64 = false, nil
					return nil
				}
				if c.rangeErr == nil {
					c.rangeErr = c.cellError(fmt.Sprintf("%q is outside the float64 range", cell))
				}
			}
		}
		c.f64 = appendDoubling(c.f64, v)
	case Float64:
		var v float64
		if !missing {
			var err error
			if v, err = strconv.ParseFloat(cell, 64); err != nil {
				var ne *strconv.NumError
				if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
					return c.cellError(fmt.Sprintf("%q is outside the float64 range", cell))
				}
				return c.cellError(fmt.Sprintf("cannot parse %q as a number", cell))
			}
		}
		c.f64 = appendDoubling(c.f64, v)
	case Float32:
		var v float32
		if !missing {
			var err error
			if v, err = parseFloat32(cell); err != nil {
				return c.cellError(err.Error())
			}
		}
		c.f32 = appendDoubling(c.f32, v)
	case Int64:
		var v int64
		if !missing {
			var err error
			if v, err = strconv.ParseInt(cell, 10, 64); err != nil {
				return c.cellError(fmt.Sprintf("cannot parse %q as an integer", cell))
			}
		}
		c.i64 = appendDoubling(c.i64, v)
	case Bool:
		var v bool
		if !missing {
			var err error
			if v, err = strconv.ParseBool(cell); err != nil {
				return c.cellError(fmt.Sprintf("cannot parse %q as a boolean", cell))
			}
		}
		c.b = appendDoubling(c.b, v)
	}
	return nil
}

// cellError formats an error about the column's cell in the current record.
func (c *csvColumnBuilder) cellError(msg string) error {
	return fmt.Errorf("%s:%d: column %q (%d): %s", c.s.name, c.s.lineOf(c.j), c.s.names[c.j], c.j+1, msg)
}

// column returns the finished column of rows rows.
func (c *csvColumnBuilder) column(rows int) (Column, error) {
	name := c.s.names[c.j]
	kind := c.kind
	if kind == 0 {
		kind = String
		if c.numeric {
			if c.rangeErr != nil {
				return nil, c.rangeErr
			}
			kind = Float64
		}
	}
	switch kind {
	case String:
		// One string holds every cell; the values are slices of it.
		all := string(c.text)
		values := make([]string, rows)
		p := 0
		for i := range values {
			n, k := binary.Uvarint(c.text[p:])
			p += k
			if c.valid == nil || c.valid[i] {
				values[i] = all[p : p+int(n)]
			}
			p += int(n)
		}
		return NewColumn(name, values, c.valid), nil
	case Float64:
		return NewColumn(name, nonNil(c.f64), c.valid), nil
	case Float32:
		return NewColumn(name, nonNil(c.f32), c.valid), nil
	case Int64:
		return NewColumn(name, nonNil(c.i64), c.valid), nil
	}
	return NewColumn(name, nonNil(c.b), c.valid), nil
}

// nonNil returns s, or an empty slice for nil, so that an empty column's
// values are never nil.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// appendDoubling is append with capacity doubling: append grows big slices
// by only 1.25×, which for columns read cell by cell allocates about five
// times their final size in all; doubling allocates about twice.
func appendDoubling[T any](s []T, v ...T) []T {
	if n := len(s) + len(v); n > cap(s) {
		s = slices.Grow(s, max(n, 2*cap(s), 64)-len(s))
	}
	return append(s, v...)
}
