package data

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/fathom-ml/fathom/internal/parquetpage"
)

// TestParsePageHeaderArrow: the page headers arrow-go writes (with their
// statistics) decode, page for page, to the pages arrow-go's own page
// reader gives: type, values, encodings, sizes.
func TestParsePageHeaderArrow(t *testing.T) {
	for _, v := range []parquet.DataPageVersion{parquet.DataPageV1, parquet.DataPageV2} {
		path := filepath.Join(t.TempDir(), "h.parquet")
		writeFloatSpec(t, path, floatSpec{n: 900, w: 3, rg: 500, nullable: func(j int) bool { return j > 0 }, null: func(i, j int) bool { return i%7 == j },
			value: func(i, j int) float32 { return float32(i % (10 + 400*j)) },
			props: []parquet.WriterProperty{parquet.WithDataPageVersion(v), parquet.WithDataPageSize(512), parquet.WithCompression(compress.Codecs.Snappy),
				parquet.WithDictionaryDefault(true), parquet.WithDictionaryPageSizeLimit(800), parquet.WithStats(true)}})
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		pf, err := file.OpenParquetFile(path, false)
		if err != nil {
			t.Fatal(err)
		}
		pages, stats := 0, false
		for g := range pf.NumRowGroups() {
			rg := pf.RowGroup(g)
			for c := range 3 {
				cc, _ := rg.MetaData().ColumnChunk(c)
				if ok, _ := cc.StatsSet(); !ok {
					t.Fatal("no statistics written")
				}
				start := cc.DataPageOffset()
				if cc.HasDictionaryPage() {
					start = cc.DictionaryPageOffset()
				}
				chunk := raw[start : start+cc.TotalCompressedSize()]
				pr, err := rg.GetColumnPageReader(c)
				if err != nil {
					t.Fatal(err)
				}
				for pr.Next() {
					h, n, err := parquetpage.ParseHeader(chunk)
					if err != nil {
						t.Fatalf("row group %d column %d: %v", g, c, err)
					}
					p := pr.Page()
					var enc parquet.Encoding
					size := len(p.Data())
					switch p := p.(type) {
					case *file.DictionaryPage:
						enc = parquet.Encoding(p.Encoding())
						if h.Type != parquetpage.PageDictionary || !h.HasDict {
							t.Fatalf("%+v for a dictionary page", h)
						}
					case *file.DataPageV1:
						enc, size = parquet.Encoding(p.Encoding()), int(p.UncompressedSize())
						stats = stats || p.Statistics().HasMax
						if h.Type != parquetpage.PageData || !h.HasData || h.DefEncoding != int32(p.DefinitionLevelEncoding()) {
							t.Fatalf("%+v for a v1 page", h)
						}
					case *file.DataPageV2:
						enc, size = parquet.Encoding(p.Encoding()), int(p.UncompressedSize())
						stats = stats || p.Statistics().HasMax
						if h.Type != parquetpage.PageDataV2 || !h.HasV2 || h.NumNulls != p.NumNulls() || h.DefLen != p.DefinitionLevelByteLen() || h.ValuesCompressed != p.IsCompressed() {
							t.Fatalf("%+v for a v2 page", h)
						}
					}
					if h.NumValues != p.NumValues() || parquet.Encoding(h.Encoding) != enc || int(h.Uncompressed) != size {
						t.Fatalf("%+v for a page of %d values, %s, %d bytes", h, p.NumValues(), enc, size)
					}
					chunk = chunk[n+int(h.Compressed):]
					pages++
				}
				if err := pr.Err(); err != nil || len(chunk) != 0 {
					t.Fatalf("%v, %d bytes left", err, len(chunk))
				}
				pr.Close()
			}
		}
		pf.Close()
		if pages < 20 || !stats {
			t.Fatalf("%d pages, statistics in their headers: %v", pages, stats)
		}
	}
}
