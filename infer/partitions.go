package infer

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fathom-ml/fathom/data"
)

// Partition is one input file: a Parquet or CSV file with the values of
// the Hive-style key=value directories above it (below the input it was
// found under).
type Partition struct {
	// Path is the file.
	Path string
	// Rel is its path below the input it was found under (below a glob's
	// leading directories; its base name for a file named directly): the
	// output's path below the output directory, with the extension
	// replaced by .parquet.
	Rel string
	// Keys are the key=value directories' columns, outermost first.
	Keys []Key
}

// Key is the value of a key=value directory column for one partition.
type Key struct {
	Name string
	// Value is the decoded directory value (data.UnescapeHivePath); Null
	// is set for Hive's __HIVE_DEFAULT_PARTITION__ (or an empty value).
	Value string
	Null  bool
	// Kind is the column's kind over the whole listing, as
	// ReadParquetFrame types key columns (data.HiveKind): Int64 when
	// every value is an integer, Float64 when every one is a decimal
	// number, else String (also when every value is null).
	Kind data.Kind
}

// hiveNull is the directory value Hive and Spark write for a null key.
const hiveNull = "__HIVE_DEFAULT_PARTITION__"

// isDataFile reports whether name is a file ListPartitions takes.
func isDataFile(name string) bool {
	l := strings.ToLower(name)
	return data.IsParquetFile(l) || strings.HasSuffix(l, ".csv") || strings.HasSuffix(l, ".csv.gz")
}

// ListPartitions expands inputs (files, globs, directories) into the
// partitions to predict, in a fixed order (input order, then path order).
// A directory is searched recursively for Parquet files (.parquet, .parq,
// .pq) and CSV files (.csv, .csv.gz), skipping names that start with "."
// or "_" (_SUCCESS, _temporary, .crc files) as Spark and PyArrow do, except
// key=value directories; each key=value directory between the input and a
// file gives the file a column. Every file of one input must sit under the
// same keys. With several inputs, the partitions of a directory or glob
// have its name before their Rel (train/part-0.parquet,
// test/part-0.parquet); two partitions with the same Rel are still an
// error (their outputs would collide).
func ListPartitions(inputs []string) ([]Partition, error) {
	var parts []Partition
	seen := map[string]bool{}
	rels := map[string]string{}
	for _, in := range inputs {
		var found []Partition
		matches := []string{in}
		base := "" // what a match's Rel is relative to: a glob's leading directories
		if strings.ContainsAny(in, "*?[") {
			m, err := filepath.Glob(in)
			if err != nil {
				return nil, fmt.Errorf("input %q: %w", in, err)
			}
			if len(m) == 0 {
				return nil, fmt.Errorf("input %q: no file matches", in)
			}
			matches = m
			base = globBase(in)
		}
		for _, path := range matches {
			st, err := os.Stat(path)
			if err != nil {
				return nil, fmt.Errorf("input: %w", err)
			}
			prefix := ""
			if base != "" {
				if prefix, err = filepath.Rel(base, path); err != nil {
					return nil, fmt.Errorf("input %s: %w", path, err)
				}
			}
			if !st.IsDir() {
				if !isDataFile(path) {
					return nil, fmt.Errorf("input %s: not a Parquet (.parquet, .parq, .pq) or CSV (.csv, .csv.gz) file", path)
				}
				rel := filepath.Base(path)
				if prefix != "" {
					rel = prefix
				}
				found = append(found, Partition{Path: path, Rel: rel, Keys: hiveKeys(rel)})
				continue
			}
			ps, err := walkDir(path)
			if err != nil {
				return nil, err
			}
			if len(ps) == 0 {
				return nil, fmt.Errorf("input %s: no Parquet or CSV files in it", path)
			}
			for i := range ps {
				if prefix != "" {
					ps[i].Rel = filepath.Join(prefix, ps[i].Rel)
				}
				ps[i].Keys = hiveKeys(ps[i].Rel)
			}
			found = append(found, ps...)
		}
		if len(inputs) > 1 && (base != "" || isDir(in)) {
			// Several inputs: each directory's (or glob's) partitions go
			// under its name, so that part-0.parquet of two inputs do not
			// collide.
			root := base
			if root == "" {
				root = in
			}
			for i := range found {
				found[i].Rel = filepath.Join(filepath.Base(filepath.Clean(root)), found[i].Rel)
			}
		}
		if err := typeKeys(in, found); err != nil {
			return nil, err
		}
		for _, p := range found {
			abs, _ := filepath.Abs(p.Path)
			if seen[abs] {
				continue
			}
			seen[abs] = true
			o := outputRel(p.Rel)
			if prev, dup := rels[o]; dup {
				return nil, fmt.Errorf("inputs %s and %s would both write %s: give them different names or directories", prev, p.Path, o)
			}
			rels[o] = p.Path
			parts = append(parts, p)
		}
	}
	return parts, nil
}

// walkDir lists the data files under dir with their keys.
func walkDir(dir string) ([]Partition, error) {
	var out []Partition
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if path == dir {
			return nil
		}
		if d.IsDir() {
			if (strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".")) && !strings.Contains(name, "=") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") || !isDataFile(name) {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		p := Partition{Path: path, Rel: rel}
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("input %s: %w", dir, err)
	}
	slices.SortFunc(out, func(a, b Partition) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// globBase returns the leading directories of a glob pattern that hold
// no pattern characters ("." when there are none).
func globBase(pattern string) string {
	dir := filepath.Dir(pattern)
	for strings.ContainsAny(dir, "*?[") {
		dir = filepath.Dir(dir)
	}
	return dir
}

// hiveKeys returns the key=value directories of a relative path.
func hiveKeys(rel string) []Key {
	var keys []Key
	for _, seg := range strings.Split(filepath.Dir(rel), string(filepath.Separator)) {
		k, v, ok := strings.Cut(seg, "=")
		if !ok || k == "" {
			continue
		}
		null := v == "" || v == hiveNull
		keys = append(keys, Key{Name: data.UnescapeHivePath(k), Value: data.UnescapeHivePath(v), Null: null})
	}
	return keys
}

// typeKeys checks that the partitions of one input share their keys and
// sets each key's kind.
func typeKeys(in string, ps []Partition) error {
	if len(ps) == 0 {
		return nil
	}
	names := func(p Partition) []string {
		var n []string
		for _, k := range p.Keys {
			n = append(n, k.Name)
		}
		return n
	}
	first := names(ps[0])
	for _, p := range ps[1:] {
		if got := names(p); !slices.Equal(got, first) {
			return fmt.Errorf("input %s: %s is under the keys [%s], %s under [%s]: every file must be under the same key=value directories",
				in, ps[0].Path, strings.Join(first, ", "), p.Path, strings.Join(got, ", "))
		}
	}
	for j := range first {
		var vals []string
		for _, p := range ps {
			if k := p.Keys[j]; !k.Null {
				vals = append(vals, k.Value)
			}
		}
		kind := data.HiveKind(vals)
		for i := range ps {
			ps[i].Keys[j].Kind = kind
		}
	}
	return nil
}

// outputRel is the output file of a partition below the output directory.
func outputRel(rel string) string {
	l := strings.ToLower(rel)
	for _, ext := range []string{".csv.gz", ".csv", ".parquet", ".parq", ".pq"} {
		if strings.HasSuffix(l, ext) {
			return rel[:len(rel)-len(ext)] + ".parquet"
		}
	}
	return rel + ".parquet"
}

// hasKey reports whether name is one of the partition's key columns.
func (p Partition) hasKey(name string) bool {
	return slices.ContainsFunc(p.Keys, func(k Key) bool { return k.Name == name })
}

// keyColumns returns the partition's key columns for a batch of n rows.
func (p Partition) keyColumns(n int) []data.Column {
	cols := make([]data.Column, 0, len(p.Keys))
	for _, k := range p.Keys {
		var valid []bool
		if k.Null {
			valid = make([]bool, n)
		}
		switch k.Kind {
		case data.Int64:
			v, _ := strconv.ParseInt(k.Value, 10, 64)
			cols = append(cols, data.NewColumn(k.Name, repeat(v, n), valid))
		case data.Float64:
			v, _ := strconv.ParseFloat(k.Value, 64)
			cols = append(cols, data.NewColumn(k.Name, repeat(v, n), valid))
		default:
			cols = append(cols, data.NewColumn(k.Name, repeat(k.Value, n), valid))
		}
	}
	return cols
}

func repeat[T any](v T, n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = v
	}
	return s
}
