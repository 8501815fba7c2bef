package data

import (
	"math"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pqgo "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
)

// The files of these tests are written with github.com/parquet-go/parquet-go,
// a Parquet implementation independent of arrow-go, which fathom reads with.

// writeParquetGo writes rows to path with parquet-go, making directories;
// the schema is that of T's struct tags, or schema if given.
func writeParquetGo[T any](t *testing.T, path string, rows []T, schema ...*pqgo.Schema) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var opts []pqgo.WriterOption
	for _, s := range schema {
		opts = append(opts, s)
	}
	w := pqgo.NewGenericWriter[T](f, opts...)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// decimalRow is a row of decimalSchema.
type decimalRow struct {
	Price  int32    `parquet:"price"`
	Amount *int64   `parquet:"amount,optional"`
	Big    [16]byte `parquet:"big"`
	Huge   [32]byte `parquet:"huge"`
	Var    []byte   `parquet:"var"`
	Label  string   `parquet:"label"`
}

// decimalSchema has a DECIMAL column of each physical type: INT32, INT64
// (nullable), FIXED_LEN_BYTE_ARRAY of 16 bytes (Arrow's decimal128) and of
// 32 (decimal256), and BYTE_ARRAY. (A group's columns are in name order.)
var decimalSchema = pqgo.NewSchema("decimals", pqgo.Group{
	"price":  pqgo.Decimal(2, 9, pqgo.Int32Type),
	"amount": pqgo.Optional(pqgo.Decimal(4, 18, pqgo.Int64Type)),
	"big":    pqgo.Decimal(6, 38, pqgo.FixedLenByteArrayType(16)),
	"huge":   pqgo.Decimal(0, 76, pqgo.FixedLenByteArrayType(32)),
	"var":    pqgo.Decimal(1, 30, pqgo.ByteArrayType),
	"label":  pqgo.String(),
})

// unscaled returns the decimal string s times 10^scale, an integer.
func unscaled(t *testing.T, s string, scale int) *big.Int {
	t.Helper()
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("bad decimal %q", s)
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
	if !r.IsInt() {
		t.Fatalf("%q has more than %d decimals", s, scale)
	}
	return r.Num()
}

// twosComplement returns v as a big-endian two's complement of n bytes, or
// of as few as hold it when n is 0.
func twosComplement(v *big.Int, n int) []byte {
	if n == 0 {
		n = v.BitLen()/8 + 1
	}
	m := new(big.Int).Set(v)
	if m.Sign() < 0 {
		m.Add(m, new(big.Int).Lsh(big.NewInt(1), uint(8*n)))
	}
	return m.FillBytes(make([]byte, n))
}

func TestReadParquetDecimals(t *testing.T) {
	// Decimal strings per column and row, "" for null.
	price := []string{"19.99", "-0.05", "0.30"}
	amount := []string{"0.3", "", "-99999999999999.9999"}
	bigs := []string{"123456789012345678901234.567891", "-0.000001", "0.1"}
	huge := []string{"-1" + strings.Repeat("0", 70), "9007199254740993", strings.Repeat("9", 76)}
	vars := []string{"0.3", "-1234567890123456789012345678.9", "1.1"}
	rows := make([]decimalRow, 3)
	for i := range rows {
		r := &rows[i]
		r.Price = int32(unscaled(t, price[i], 2).Int64())
		if amount[i] != "" {
			v := unscaled(t, amount[i], 4).Int64()
			r.Amount = &v
		}
		copy(r.Big[:], twosComplement(unscaled(t, bigs[i], 6), 16))
		copy(r.Huge[:], twosComplement(unscaled(t, huge[i], 0), 32))
		r.Var = twosComplement(unscaled(t, vars[i], 1), 0)
		r.Label = string(rune('a' + i))
	}
	p := filepath.Join(t.TempDir(), "decimals.parquet")
	writeParquetGo(t, p, rows, decimalSchema)

	f, err := ReadParquetFrame(p, ParquetFrameOptions{BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if want := "Frame 3×6 [amount float64, big float64, huge float64, label string, price float64, var float64]"; f.String() != want {
		t.Fatalf("got %s\nwant %s", f, want)
	}
	// Each value is the float64 nearest to the decimal, as ParseFloat gives.
	for _, col := range []struct {
		name string
		dec  []string
	}{{"price", price}, {"amount", amount}, {"big", bigs}, {"huge", huge}, {"var", vars}} {
		got, _ := f.Float64s(col.name)
		for i, s := range col.dec {
			if s == "" {
				if !f.Col(col.name).IsNull(i) {
					t.Errorf("%s[%d] = %v, want null", col.name, i, got[i])
				}
				continue
			}
			want, _ := strconv.ParseFloat(s, 64)
			if got[i] != want || f.Col(col.name).IsNull(i) {
				t.Errorf("%s[%d] = %v, want %v (%s)", col.name, i, got[i], want, s)
			}
		}
	}

	// As features (once refused: "features must be numbers or booleans")
	// and as a numeric label.
	// "huge" holds -1e70, beyond float32: refused with its row.
	if _, err := ReadParquet(p, ParquetOptions{Label: "label", Ignore: []string{"amount"}}); err == nil || !strings.Contains(err.Error(), `row 1: column "huge": -1e+70 is outside the float32 range`) {
		t.Fatalf("got %v", err)
	}
	tab, err := ReadParquet(p, ParquetOptions{Label: "label", Ignore: []string{"amount", "huge"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tab.Columns, []string{"big", "price", "var"}) || tab.X[1] != 19.99 || tab.X[4] != -0.05 || tab.X[5] != float32(-1234567890123456789012345678.9) {
		t.Fatalf("table %v %v", tab.Columns, tab.X)
	}
	tab, err = ReadParquet(p, ParquetOptions{Label: "price", LabelKind: LabelNumeric, Select: []string{"var"}})
	if err != nil || !slices.Equal(tab.Y, []float32{19.99, -0.05, 0.3}) {
		t.Fatalf("numeric label: %v, %v", tab, err)
	}
	// A null decimal is a missing value like any other.
	if _, err := ReadParquet(p, ParquetOptions{Label: "label", Select: []string{"amount"}}); err == nil || !strings.HasPrefix(err.Error(), p+`: row 2: column "amount": null value`) {
		t.Fatalf("null decimal: %v", err)
	}
}

// TestDecimalFloat64 checks the conversion against strconv.ParseFloat of
// the decimal string, on both of its paths.
func TestDecimalFloat64(t *testing.T) {
	for _, test := range []struct {
		unscaled string
		scale    int32
	}{
		{"3", 1}, {"-3", 1}, {"1", 0}, {"0", 5}, {"1", 22}, {"1", 23}, {"7", -3},
		{"9007199254740992", 2}, {"9007199254740993", 2}, {"-9007199254740993", 0},
		{"123456789012345678901234567891", 6}, {"1", -300}, {"1", 400},
	} {
		n, _ := new(big.Int).SetString(test.unscaled, 10)
		want, _ := strconv.ParseFloat(test.unscaled+"e"+strconv.Itoa(int(-test.scale)), 64)
		var got float64
		if n.IsInt64() {
			got = decimalFloat64(n.Int64(), nil, test.scale)
		} else {
			got = decimalFloat64(0, n, test.scale)
		}
		if got != want && !(math.IsInf(got, 1) && math.IsInf(want, 1)) {
			t.Errorf("%se%d: got %v, want %v", test.unscaled, -test.scale, got, want)
		}
	}
}

// timeRow has a DATE, TIMESTAMPs of three units (UTC-adjusted or not), a
// legacy INT96 timestamp (as Spark, Hive and Impala wrote them) and TIMEs.
type timeRow struct {
	Day  int32            `parquet:"day,date"`
	TsMs int64            `parquet:"ts_ms,timestamp(millisecond)"`
	TsUs int64            `parquet:"ts_us,timestamp(microsecond:local)"`
	TsNs *int64           `parquet:"ts_ns,timestamp(nanosecond),optional"`
	Ts96 deprecated.Int96 `parquet:"ts96"`
	TMs  int32            `parquet:"t_ms,time(millisecond)"`
	TUs  int64            `parquet:"t_us,time(microsecond)"`
	Y    float64          `parquet:"y"`
}

// int96Timestamp returns the INT96 timestamp of a day since 1970-01-01 and
// the nanoseconds within it: nanoseconds little-endian, then the Julian day.
func int96Timestamp(day int32, nanos int64) deprecated.Int96 {
	const unixJulianDay = 2440588
	return deprecated.Int96{uint32(nanos), uint32(nanos >> 32), uint32(unixJulianDay + day)}
}

func TestReadParquetDatesAndTimes(t *testing.T) {
	ns, minus1 := int64(1704067200123456789), int64(-1)
	rows := []timeRow{
		{Day: 19723, TsMs: 1704067200500, TsUs: 1704067200250000, TsNs: &ns, Ts96: int96Timestamp(19723, 250_000_000), TMs: 3723500, TUs: 86399999999, Y: 1},
		{Day: 0, TsMs: -1500, TsUs: 0, TsNs: nil, Ts96: int96Timestamp(0, 0), TMs: 0, TUs: 1, Y: 2},
		{Day: -1, TsMs: 0, TsUs: -1, TsNs: &minus1, Ts96: int96Timestamp(-1, 43200e9), Y: 3},
	}
	p := filepath.Join(t.TempDir(), "times.parquet")
	writeParquetGo(t, p, rows)

	f, err := ReadParquetFrame(p, ParquetFrameOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "Frame 3×8 [day float64, ts_ms float64, ts_us float64, ts_ns float64, ts96 float64, t_ms float64, t_us float64, y float64]"; f.String() != want {
		t.Fatalf("got %s\nwant %s", f, want)
	}
	for _, test := range []struct {
		name string
		want []float64
	}{
		{"day", []float64{19723, 0, -1}},                     // days since 1970-01-01
		{"ts_ms", []float64{1704067200.5, -1.5, 0}},          // seconds since 1970-01-01 00:00:00
		{"ts_us", []float64{1704067200.25, 0, -1e-6}},        // the same, wall clock
		{"ts_ns", []float64{1704067200.123456789, 0, -1e-9}}, // row 2 is null
		{"ts96", []float64{1704067200.25, 0, -43200}},        // INT96
		{"t_ms", []float64{3723.5, 0, 0}},                    // seconds since midnight
		{"t_us", []float64{86399.999999, 1e-6, 0}},
	} {
		got, err := f.Float64s(test.name)
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range test.want {
			// Within a few float64 steps of the exact value.
			if math.Abs(got[i]-w) > 4*ulp(w) {
				t.Errorf("%s[%d] = %.10f, want %.10f", test.name, i, got[i], w)
			}
		}
	}
	if v := f.Col("ts_ns").Valid(); !slices.Equal(v, []bool{true, false, true}) {
		t.Errorf("ts_ns valid %v", v)
	}
	tab, err := ReadParquet(p, ParquetOptions{Label: "y", LabelKind: LabelNumeric, Select: []string{"day", "t_ms"}})
	if err != nil || !slices.Equal(tab.X, []float32{19723, 3723.5, 0, 0, -1, 0}) {
		t.Fatalf("table: %v, %v", tab, err)
	}
}

func decimal128Of(t *testing.T, s string, scale int32) decimal128.Num {
	t.Helper()
	n, err := decimal128.FromString(s, 38, scale)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func decimal256Of(t *testing.T, s string, scale int32) decimal256.Num {
	t.Helper()
	n, err := decimal256.FromString(s, 76, scale)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func ulp(x float64) float64 {
	return math.Nextafter(math.Abs(x), math.Inf(1)) - math.Abs(x)
}

// TestReadParquetLogicalArrow covers what arrow-go writes of the same
// types (decimal256, date64 through its stored schema, timestamps in
// seconds, lists of decimals).
func TestReadParquetLogicalArrow(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "d128", Type: &arrow.Decimal128Type{Precision: 10, Scale: 3}, Nullable: true},
		{Name: "d256", Type: &arrow.Decimal256Type{Precision: 40, Scale: 2}},
		{Name: "date64", Type: arrow.FixedWidthTypes.Date64},
		{Name: "ts_s", Type: &arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"}},
		{Name: "vec", Type: arrow.FixedSizeListOf(2, &arrow.Decimal128Type{Precision: 5, Scale: 1})},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	d128 := b.Field(0).(*array.Decimal128Builder)
	d128.Append(decimal128Of(t, "1.234", 3))
	d128.AppendNull()
	d256 := b.Field(1).(*array.Decimal256Builder)
	d256.Append(decimal256Of(t, "0.03", 2))
	d256.Append(decimal256Of(t, "-12345678901234567890123456789012345.67", 2))
	b.Field(2).(*array.Date64Builder).AppendValues([]arrow.Date64{86400000 * 2, -86400000}, nil)
	b.Field(3).(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{1, -2}, nil)
	vb := b.Field(4).(*array.FixedSizeListBuilder)
	eb := vb.ValueBuilder().(*array.Decimal128Builder)
	for _, pair := range [][2]string{{"0.1", "0.2"}, {"-0.3", "1234.5"}} {
		vb.Append(true)
		eb.Append(decimal128Of(t, pair[0], 1))
		eb.Append(decimal128Of(t, pair[1], 1))
	}
	p := filepath.Join(t.TempDir(), "logical.parquet")
	writeRecord(t, p, b, 1024)
	f, err := ReadParquetFrame(p, ParquetFrameOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "Frame 2×5 [d128 float64, d256 float64, date64 float64, ts_s float64, vec vector<float64, 2>]"; f.String() != want {
		t.Fatalf("got %s\nwant %s", f, want)
	}
	for name, want := range map[string][]float64{
		"d128":   {1.234, 0},
		"d256":   {0.03, -12345678901234567890123456789012345.67},
		"date64": {2, -1},
		"ts_s":   {1, -2},
	} {
		if got, _ := f.Float64s(name); !slices.Equal(got, want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if v, _ := f.Vectors("vec"); !slices.Equal(v.Float64s(), []float64{0.1, 0.2, -0.3, 1234.5}) {
		t.Errorf("vec = %v", v.Float64s())
	}
}
