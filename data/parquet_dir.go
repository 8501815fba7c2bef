package data

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// parquetExts are the name endings of the Parquet files of a directory.
var parquetExts = []string{".parquet", ".parq", ".pq"}

// IsParquetFile reports whether a file name has one of the endings Parquet
// files are given (.parquet, .parq, .pq; any letter case).
func IsParquetFile(name string) bool {
	lower := strings.ToLower(name)
	for _, ext := range parquetExts {
		if strings.HasSuffix(lower, ext) {
			return true
		}
	}
	return false
}

// hiveNull is the directory value Hive and Spark write for a null key.
const hiveNull = "__HIVE_DEFAULT_PARTITION__"

// parquetDataset is what a Parquet path holds: its files, in the order they
// are read, and the columns their Hive-style key=value directories add.
type parquetDataset struct {
	keys  []hiveKey
	parts []parquetPart
}

// parquetPart is one file of a data set with the values of its keys.
type parquetPart struct {
	path string
	vals []hiveValue // one per parquetDataset.keys
}

// hiveKey is a column given by key=value directories: its name and its
// kind, Int64 or Float64 when every value parses as one, else String.
type hiveKey struct {
	name string
	kind Kind
}

// arrowType returns the Arrow type the key's column is read as.
func (k hiveKey) arrowType() arrow.DataType {
	switch k.kind {
	case Int64:
		return arrow.PrimitiveTypes.Int64
	case Float64:
		return arrow.PrimitiveTypes.Float64
	}
	return arrow.BinaryTypes.String
}

// hiveValue is the value of a key for one file, decoded from its directory
// name; i and f are set once the key's kind is known.
type hiveValue struct {
	null bool
	s    string
	i    int64
	f    float64
}

// ParquetParts returns the Parquet files of the data set at dir, sorted by
// path: every file whose name ends in .parquet, .parq or .pq (in any case),
// in dir or below it, as Spark, PyArrow and SQL engines lay partitioned
// data out. Symbolic links are followed.
// Files and directories whose names start with "." or "_" are skipped, as
// those engines skip them (_SUCCESS, _metadata, .crc checksums, _temporary
// directories of unfinished jobs), except directories such as _x=1 that are
// key=value partitions. It is an error if there are none.
func ParquetParts(dir string) ([]string, error) {
	ds, err := listParquetDir(dir)
	if err != nil {
		return nil, err
	}
	files := make([]string, len(ds.parts))
	for i, p := range ds.parts {
		files[i] = p.path
	}
	return files, nil
}

// listParquet returns the data set at path: a single file, or the files of
// a directory with the columns of their key=value directories.
func listParquet(path string) (*parquetDataset, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return &parquetDataset{parts: []parquetPart{{path: path}}}, nil
	}
	return listParquetDir(path)
}

// listParquetDir lists the Parquet files under dir (see ParquetParts) and
// reads the key=value directories between dir and each file. Every file
// must be under the same keys, in the same order; a directory level that is
// not key=value adds no column.
func listParquetDir(dir string) (*parquetDataset, error) {
	root, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	var l parquetListing
	if err := l.walk(dir, []os.FileInfo{root}); err != nil {
		return nil, err
	}
	files, other, hidden := l.files, l.other, l.hidden
	if len(files) == 0 {
		msg := fmt.Sprintf("%s: no Parquet files (*.parquet, *.parq, *.pq) in it or below it", dir)
		if len(other) > 0 {
			msg += "; other files: " + someNames(other)
		}
		if len(hidden) > 0 {
			msg += "; skipped as hidden or metadata: " + someNames(hidden)
		}
		return nil, fmt.Errorf("%s", msg)
	}
	slices.Sort(files)

	ds := &parquetDataset{parts: make([]parquetPart, len(files))}
	var raw [][]hiveValue
	for i, p := range files {
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return nil, err
		}
		names, vals, err := hiveSegments(filepath.Dir(rel))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if i == 0 {
			for _, n := range names {
				ds.keys = append(ds.keys, hiveKey{name: n})
			}
		} else if !slices.EqualFunc(names, ds.keys, func(n string, k hiveKey) bool { return n == k.name }) {
			return nil, fmt.Errorf("%s: files are under different key=value directories: %s under %s, %s under %s",
				dir, files[0], describeKeys(ds.keys), p, describeNames(names))
		}
		ds.parts[i] = parquetPart{path: p, vals: vals}
		raw = append(raw, vals)
	}
	for k := range ds.keys {
		col := make([]string, 0, len(raw))
		for _, vals := range raw {
			if !vals[k].null {
				col = append(col, vals[k].s)
			}
		}
		ds.keys[k].kind = hiveKind(col)
		for _, vals := range raw {
			v := &vals[k]
			if v.null {
				continue
			}
			switch ds.keys[k].kind {
			case Int64:
				v.i, _ = strconv.ParseInt(v.s, 10, 64)
			case Float64:
				v.f, _ = strconv.ParseFloat(v.s, 64)
			}
		}
	}
	return ds, nil
}

// parquetListing collects the files under a directory.
type parquetListing struct {
	files  []string // Parquet files, by path
	other  []string // names of other files
	hidden []string // names of skipped files and directories
}

// walk lists dir, whose directory and those above it up to the root are
// ancestors, and the directories below it. Symbolic links are followed
// (the root too may be one); a link back to an ancestor is an error.
func (l *parquetListing) walk(dir string, ancestors []os.FileInfo) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		p := filepath.Join(dir, name)
		if hiddenParquetName(name) {
			l.hidden = append(l.hidden, name)
			continue
		}
		isDir := e.IsDir()
		var st os.FileInfo
		if isDir || e.Type()&fs.ModeSymlink != 0 {
			if st, err = os.Stat(p); err == nil {
				isDir = st.IsDir()
			} // a broken link is a file, which fails to open if it is read
		}
		if isDir {
			if slices.ContainsFunc(ancestors, func(a os.FileInfo) bool { return os.SameFile(a, st) }) {
				return fmt.Errorf("%s: a symbolic link to a directory above it", p)
			}
			if err := l.walk(p, append(ancestors, st)); err != nil {
				return err
			}
			continue
		}
		lower := strings.ToLower(name)
		if slices.ContainsFunc(parquetExts, func(ext string) bool { return strings.HasSuffix(lower, ext) }) {
			l.files = append(l.files, p)
		} else {
			l.other = append(l.other, name)
		}
	}
	return nil
}

// hiddenParquetName reports whether a file or directory is skipped: names
// starting with "." or "_", as Spark's and PyArrow's listings skip them,
// but not "_" names with "=" in them (key=value directories of a key
// starting with "_").
func hiddenParquetName(name string) bool {
	return strings.HasPrefix(name, ".") || (strings.HasPrefix(name, "_") && !strings.Contains(name, "="))
}

// hiveSegments returns the keys and values of the key=value directories of
// a relative directory path ("." for none), decoded.
func hiveSegments(rel string) ([]string, []hiveValue, error) {
	if rel == "." {
		return nil, nil, nil
	}
	var names []string
	var vals []hiveValue
	for _, seg := range strings.Split(filepath.ToSlash(rel), "/") {
		key, val, ok := strings.Cut(seg, "=")
		if !ok || key == "" {
			continue
		}
		key = unescapePathName(key)
		if slices.Contains(names, key) {
			return nil, nil, fmt.Errorf("key %q appears twice in its directories", key)
		}
		names = append(names, key)
		if val == hiveNull || val == "" {
			vals = append(vals, hiveValue{null: true})
		} else {
			vals = append(vals, hiveValue{s: unescapePathName(val)})
		}
	}
	return names, vals, nil
}

// UnescapeHivePath decodes a key=value directory's key or value as
// ReadParquetFrame does (see unescapePathName).
func UnescapeHivePath(s string) string { return unescapePathName(s) }

// HiveKind returns the kind ReadParquetFrame gives a key=value directory
// column from its non-null values (see hiveKind).
func HiveKind(vals []string) Kind { return hiveKind(vals) }

// unescapePathName decodes the %XX escapes Spark and Hive write in
// key=value directory names (for "/", "=", "%", ":" and other characters),
// as PyArrow decodes them. A "%" not followed by two hex digits is kept.
func unescapePathName(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				b = append(b, hi<<4|lo)
				i += 2
				continue
			}
		}
		b = append(b, s[i])
	}
	return string(b)
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// hiveKind returns the kind of a key's column from its non-null values:
// Int64 if every one is a base-10 int64, Float64 if every one is a decimal
// number, String otherwise (and when there are no values).
func hiveKind(vals []string) Kind {
	if len(vals) == 0 {
		return String
	}
	kind := Int64
	for _, v := range vals {
		if kind == Int64 {
			if _, err := strconv.ParseInt(v, 10, 64); err == nil {
				continue
			}
			kind = Float64
		}
		if !isDecimalNumber(v) {
			return String
		}
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return String
		}
	}
	return kind
}

// isDecimalNumber reports whether s is a number in decimal notation: an
// optional sign, digits with an optional fraction, an optional exponent.
// It refuses what strconv.ParseFloat also takes (NaN, Inf, hexadecimal,
// underscores), which as directory names are more likely words or ids.
func isDecimalNumber(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for ; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
		digits++
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for ; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

func describeKeys(keys []hiveKey) string {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.name
	}
	return describeNames(names)
}

func describeNames(names []string) string {
	if len(names) == 0 {
		return "no key=value directory"
	}
	return "keys " + strings.Join(names, ", ")
}

// someNames lists the first few names of a list, and how many more.
func someNames(names []string) string {
	const show = 3
	if len(names) <= show {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:show], ", "), len(names)-show)
}
