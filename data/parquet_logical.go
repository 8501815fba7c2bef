package data

import (
	"math"
	"math/big"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// This file reads the Parquet types that hold numbers under another name:
// decimals (what SQL engines write for numeric(p,s)), dates, timestamps,
// and times of day. They are read as float64 numbers, as Spark's casts give
// them: a decimal's value, days since 1970-01-01 (unix_date), seconds since
// 1970-01-01 00:00:00 with a fraction (CAST(ts AS DOUBLE)), seconds since
// midnight.

// isNumberLikeType reports whether dt is one of the types above.
func isNumberLikeType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.DECIMAL32, arrow.DECIMAL64, arrow.DECIMAL128, arrow.DECIMAL256,
		arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP, arrow.TIME32, arrow.TIME64:
		return true
	}
	return false
}

// numberLikeValue returns element i of an array of one of the types above
// as float64, and false for any other array.
func numberLikeValue(a arrow.Array, i int) (float64, bool) {
	switch a := a.(type) {
	case *array.Decimal32:
		return decimalFloat64(int64(a.Value(i)), nil, a.DataType().(arrow.DecimalType).GetScale()), true
	case *array.Decimal64:
		return decimalFloat64(int64(a.Value(i)), nil, a.DataType().(arrow.DecimalType).GetScale()), true
	case *array.Decimal128:
		n := a.Value(i)
		scale := a.DataType().(arrow.DecimalType).GetScale()
		lo, hi := n.LowBits(), n.HighBits()
		if (hi == 0 && lo <= math.MaxInt64) || (hi == -1 && lo > math.MaxInt64) {
			return decimalFloat64(int64(lo), nil, scale), true
		}
		return decimalFloat64(0, n.BigInt(), scale), true
	case *array.Decimal256:
		n := a.Value(i)
		scale := a.DataType().(arrow.DecimalType).GetScale()
		if w := n.Array(); fitsInt64(w) {
			return decimalFloat64(int64(w[0]), nil, scale), true
		}
		return decimalFloat64(0, n.BigInt(), scale), true
	case *array.Date32:
		return float64(a.Value(i)), true
	case *array.Date64:
		return float64(a.Value(i)) / (24 * 60 * 60 * 1000), true
	case *array.Timestamp:
		return unitSeconds(int64(a.Value(i)), a.DataType().(*arrow.TimestampType).Unit), true
	case *array.Time32:
		return unitSeconds(int64(a.Value(i)), a.DataType().(*arrow.Time32Type).Unit), true
	case *array.Time64:
		return unitSeconds(int64(a.Value(i)), a.DataType().(*arrow.Time64Type).Unit), true
	}
	return 0, false
}

// fitsInt64 reports whether the little-endian 256-bit two's complement
// words w hold an int64.
func fitsInt64(w [4]uint64) bool {
	if w[0] <= math.MaxInt64 {
		return w[1] == 0 && w[2] == 0 && w[3] == 0
	}
	return w[1] == math.MaxUint64 && w[2] == math.MaxUint64 && w[3] == math.MaxUint64
}

// exactPow10 holds the powers of ten that float64 holds exactly.
var exactPow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// decimalFloat64 returns the float64 nearest to unscaled × 10^−scale, where
// unscaled is small, or big when big is not nil. When |unscaled| ≤ 2^53
// and |scale| ≤ 22 one division (or multiplication) of exact operands
// rounds correctly; otherwise the decimal string is parsed, which rounds
// correctly too. (Arrow's ToFloat64 multiplies by an inexact 10^−scale and
// reads 0.3 as 0.30000000000000004.)
func decimalFloat64(small int64, big *big.Int, scale int32) float64 {
	if big == nil && -1<<53 <= small && small <= 1<<53 && -22 <= scale && scale <= 22 {
		if scale >= 0 {
			return float64(small) / exactPow10[scale]
		}
		return float64(small) * exactPow10[-scale]
	}
	digits := strconv.FormatInt(small, 10)
	if big != nil {
		digits = big.String()
	}
	f, _ := strconv.ParseFloat(digits+"e"+strconv.Itoa(int(-scale)), 64) // ±Inf beyond float64
	return f
}

// unitSeconds returns v, a count of unit, in seconds. The whole seconds and
// the fraction are converted apart, so that nanoseconds beyond 2^53 keep
// their precision.
func unitSeconds(v int64, unit arrow.TimeUnit) float64 {
	per := int64(1)
	switch unit {
	case arrow.Millisecond:
		per = 1e3
	case arrow.Microsecond:
		per = 1e6
	case arrow.Nanosecond:
		per = 1e9
	}
	return float64(v/per) + float64(v%per)/float64(per)
}
