// Package parquetpage reads the pages of Parquet column chunks on plain
// slices: the Thrift compact-protocol page headers (ParseHeader, Header),
// the RLE/bit-packed hybrid of definition and repetition levels
// (DecodeLevels, AllLevels, WalkLevels), dictionary indices
// (DecodeDictF32, DecodeDictIdx8), the file mapped into memory
// (OpenMapped, MappedFile) and the walker of a chunk's pages in the
// mapping (Walker: headers checked against the chunk and the row group
// before any allocation, Snappy and zstd pages decompressed straight from
// the mapping, other codecs through a Decompressor). Spares keeps page
// buffers for reuse.
//
// It knows nothing of a file's footer or schema, and imports no arrow-go
// package: package data reads the footer with arrow-go, picks the column
// chunks and decodes their values with a Walker, or with arrow-go's page
// reader where the walker does not win (docs/inference.md).
//
//	var w parquetpage.Walker
//	w.MaxDef = 1
//	w.Dictionary = func(b []byte, n int, enc parquetpage.Encoding) error { ... }
//	w.Buffer = func(n int) []byte { return make([]byte, n) }
//	if err := w.Start(chunk, parquetpage.Snappy, nil, rows); err != nil { ... }
//	for rows > 0 {
//		if err := w.Peek(); err != nil { ... }
//		levels, vals, err := w.Values(nil)
//		...
//		rows -= int(w.Hdr.NumValues)
//	}
//
// Every malformed page is an error wrapping ErrPage that names the page.
package parquetpage
