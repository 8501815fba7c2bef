package data_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fathom-ml/fathom/data"
)

func ExampleParseCSVFrame() {
	csv := "user,item,rating,emb0\n" +
		"ann,book,4.5,0.1\n" +
		"bob,film,NA,0.2\n" +
		"ann,film,3,0.3\n"
	f, err := data.ParseCSVFrame(strings.NewReader(csv), "ratings.csv", data.CSVFrameOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(f)
	// Index the users by hand (a string indexer's job) and add the column.
	users, _ := f.Strings("user")
	index := map[string]int64{}
	ids := make([]int64, len(users))
	for i, u := range users {
		if _, ok := index[u]; !ok {
			index[u] = int64(len(index))
		}
		ids[i] = index[u]
	}
	f, _ = f.With(data.NewColumn("user_id", ids, nil))
	t, err := f.Table(data.TableOptions{Features: []string{"user_id", "emb0"}, Label: "rating", LabelKind: data.LabelNumeric})
	fmt.Println(err)
	f = f.Take([]int{0, 2}) // the rated rows
	t, _ = f.Table(data.TableOptions{Features: []string{"user_id", "emb0"}, Label: "rating", LabelKind: data.LabelNumeric})
	fmt.Println(t.Columns, t.X, t.Y)
	// Output:
	// Frame 3×4 [user string, item string, rating float64, emb0 float64]
	// row 2: label column "rating": null label
	// [user_id emb0] [0 0.1 0 0.3] [4.5 3]
}

func ExampleDistributedBatchSampler() {
	// 10 rows, global batch 4, two ranks: every step, each rank takes its
	// half of the same global batch; the last global batch holds 2 rows.
	for rank := range 2 {
		s, _ := data.NewDistributedBatchSampler(10, 4, data.DistributedOptions{Rank: rank, Ranks: 2})
		fmt.Println("rank", rank, s.Batches(0))
	}
	// Output:
	// rank 0 [[0 1] [4 5] [8]]
	// rank 1 [[2 3] [6 7] [9]]
}

func ExampleDistributedSampler() {
	// 5 rows on two ranks: the global order 0..4 is padded with row 0.
	for rank := range 2 {
		s, _ := data.NewDistributedSampler(5, data.DistributedOptions{Rank: rank, Ranks: 2})
		fmt.Println("rank", rank, s.Indices(0))
	}
	// Output:
	// rank 0 [0 2 4]
	// rank 1 [1 3 0]
}

// A data set partitioned by key=value directories, as Spark's partitionBy
// writes it: the keys become columns.
func ExampleReadParquetDir() {
	dir, _ := os.MkdirTemp("", "sales")
	defer os.RemoveAll(dir)
	for _, p := range []struct {
		path  string
		price float32
	}{
		{"year=2023/region=north%2Feast/part-00000.snappy.parquet", 9.5},
		{"year=2024/region=__HIVE_DEFAULT_PARTITION__/part-00000.snappy.parquet", 12},
	} {
		path := filepath.Join(dir, filepath.FromSlash(p.path))
		os.MkdirAll(filepath.Dir(path), 0o755)
		data.WriteParquet(path, &data.Table{Rows: 1, Cols: 1, X: []float32{p.price}, Columns: []string{"price"}})
	}
	os.WriteFile(filepath.Join(dir, "_SUCCESS"), nil, 0o644) // skipped

	f, err := data.ReadParquetFrame(dir, data.ParquetFrameOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	regions, _ := f.Strings("region")
	fmt.Println(f)
	fmt.Printf("%q %v\n", regions, f.Col("region").Valid())
	t, err := data.ReadParquetDir(dir, data.ParquetOptions{Label: "price", LabelKind: data.LabelNumeric, Ignore: []string{"region"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(t.Columns, t.X, t.Y)
	// Output:
	// Frame 2×3 [price float32, year int64, region string]
	// ["north/east" ""] [true false]
	// [year] [2023 2024] [9.5 12]
}
