package recommend

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"syscall"
	"unsafe"

	"github.com/fathom-ml/fathom/data"
)

// Ratings are (user, item, rating) triples in three parallel slices: the
// input ALS fits on. IDs are any int32 values (Spark's ALS takes Int ids
// too); they need not be dense.
type Ratings struct {
	// User and Item are the ids of each rating; Rating its value.
	User   []int32
	Item   []int32
	Rating []float32
}

// Len is the number of ratings.
func (r *Ratings) Len() int { return len(r.Rating) }

// Slice returns the ratings [lo, hi) (sharing memory).
func (r *Ratings) Slice(lo, hi int) *Ratings {
	return &Ratings{User: r.User[lo:hi], Item: r.Item[lo:hi], Rating: r.Rating[lo:hi]}
}

func (r *Ratings) check() error {
	if len(r.User) != len(r.Rating) || len(r.Item) != len(r.Rating) {
		return fmt.Errorf("ratings: %d users, %d items, %d ratings (must be equal)", len(r.User), len(r.Item), len(r.Rating))
	}
	for i, v := range r.Rating {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("rating %d: %g is not a finite number", i+1, v)
		}
	}
	return nil
}

// FrameRatings reads the id and rating columns of a frame. Id columns may
// be int64, or float64/float32 holding integers (what a CSV reader may
// produce); a non-integer id, an id outside int32, a null or a non-finite
// rating is an error naming the column and row (rows count from 1; src,
// if not empty, names the file).
func FrameRatings(f *data.Frame, userCol, itemCol, ratingCol, src string) (*Ratings, error) {
	where := func(format string, a ...any) error {
		msg := fmt.Sprintf(format, a...)
		if src != "" {
			return fmt.Errorf("%s: %s", src, msg)
		}
		return fmt.Errorf("%s", msg)
	}
	n := f.Len()
	ids := func(col string) ([]int32, error) {
		c := f.Col(col)
		if c == nil {
			return nil, where("no column %q (the frame has %v)", col, f.Names())
		}
		out := make([]int32, n)
		put := func(i int, v float64) error {
			if c.IsNull(i) {
				return where("column %q, row %d: missing id", col, i+1)
			}
			if v != math.Trunc(v) || v < math.MinInt32 || v > math.MaxInt32 {
				return where("column %q, row %d: id %v is not an integer in the int32 range", col, i+1, v)
			}
			out[i] = int32(v)
			return nil
		}
		switch c := c.(type) {
		case *data.ScalarColumn[int64]:
			for i, v := range c.Values() {
				if c.IsNull(i) {
					return nil, where("column %q, row %d: missing id", col, i+1)
				}
				if v < math.MinInt32 || v > math.MaxInt32 {
					return nil, where("column %q, row %d: id %d is outside the int32 range", col, i+1, v)
				}
				out[i] = int32(v)
			}
		case *data.ScalarColumn[float64]:
			for i, v := range c.Values() {
				if err := put(i, v); err != nil {
					return nil, err
				}
			}
		case *data.ScalarColumn[float32]:
			for i, v := range c.Values() {
				if err := put(i, float64(v)); err != nil {
					return nil, err
				}
			}
		default:
			return nil, where("column %q is %s, not an integer id (index strings with StringIndexer)", col, c.Kind())
		}
		return out, nil
	}
	r := &Ratings{}
	var err error
	if r.User, err = ids(userCol); err != nil {
		return nil, err
	}
	if r.Item, err = ids(itemCol); err != nil {
		return nil, err
	}
	c := f.Col(ratingCol)
	if c == nil {
		return nil, where("no column %q (the frame has %v)", ratingCol, f.Names())
	}
	var value func(i int) float64
	switch c := c.(type) {
	case *data.ScalarColumn[float64]:
		value = c.Value
	case *data.ScalarColumn[float32]:
		value = func(i int) float64 { return float64(c.Value(i)) }
	case *data.ScalarColumn[int64]:
		value = func(i int) float64 { return float64(c.Value(i)) }
	default:
		return nil, where("column %q is %s, not numeric", ratingCol, c.Kind())
	}
	r.Rating = make([]float32, n)
	for i := range n {
		v := value(i)
		if c.IsNull(i) {
			return nil, where("column %q, row %d: missing rating", ratingCol, i+1)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > math.MaxFloat32 {
			return nil, where("column %q, row %d: rating %v is not a finite float32", ratingCol, i+1, v)
		}
		r.Rating[i] = float32(v)
	}
	return r, nil
}

// BinaryMagic opens the compact ratings file of the anchors' gen_ratings.py.
const BinaryMagic = "ANCRAT01"

// binaryHeader is the magic and six little-endian uint64s.
const binaryHeader = 8 + 6*8

// BinaryFile is a ratings file in the compact binary form (see
// ReadBinary), memory-mapped.
type BinaryFile struct {
	// Users and Items are the id ranges the file declares: ids lie in
	// [0, Users) and [0, Items).
	Users, Items int
	// Train is the number of leading ratings that are the training set;
	// the rest is the test set.
	Train int
	// Seed and TrueRank are the generator's.
	Seed, TrueRank uint64
	// All holds every rating: User and Item view the mapped file, Rating
	// is converted to float32.
	All *Ratings
	mem []byte
}

// ReadBinary maps a ratings file in the compact binary form written by
// gen_ratings.py (shared/anchors/python):
//
//	bytes 0..7  magic "ANCRAT01"
//	6 × uint64  n_users, n_items, n_ratings, n_train, seed, true_rank
//	int32       user[n_ratings]
//	int32       item[n_ratings]
//	uint8       rating[n_ratings]
//
// all little-endian. The id arrays are used in place (the file is
// memory-mapped read-only); Close unmaps it. A header that disagrees with
// the file's size, or an id outside its declared range, is an error.
func ReadBinary(path string) (*BinaryFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ratings: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("ratings: %w", err)
	}
	size := st.Size()
	if size < binaryHeader {
		return nil, fmt.Errorf("ratings: %s: %d bytes, shorter than the %d-byte header", path, size, binaryHeader)
	}
	head := make([]byte, binaryHeader)
	if _, err := f.ReadAt(head, 0); err != nil {
		return nil, fmt.Errorf("ratings: %s: %w", path, err)
	}
	if string(head[:8]) != BinaryMagic {
		return nil, fmt.Errorf("ratings: %s: magic %q, want %q", path, head[:8], BinaryMagic)
	}
	var h [6]uint64
	for i := range h {
		h[i] = binary.LittleEndian.Uint64(head[8+8*i:])
	}
	nu, ni, n, nt := h[0], h[1], h[2], h[3]
	if nu > math.MaxInt32 || ni > math.MaxInt32 || n > 1<<40 || nt > n {
		return nil, fmt.Errorf("ratings: %s: bad header (users %d, items %d, ratings %d, train %d)", path, nu, ni, n, nt)
	}
	if want := int64(binaryHeader + 9*n); size != want {
		return nil, fmt.Errorf("ratings: %s: %d bytes, the header's %d ratings need %d", path, size, n, want)
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("ratings: %s: mmap: %w", path, err)
	}
	bf := &BinaryFile{Users: int(nu), Items: int(ni), Train: int(nt), Seed: h[4], TrueRank: h[5], mem: mem}
	ints := func(off uint64) []int32 {
		if n == 0 {
			return nil
		}
		b := mem[off : off+4*n]
		if littleEndian {
			return unsafe.Slice((*int32)(unsafe.Pointer(&b[0])), n)
		}
		out := make([]int32, n)
		for i := range out {
			out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return out
	}
	all := &Ratings{User: ints(binaryHeader), Item: ints(binaryHeader + 4*n), Rating: make([]float32, n)}
	for i, v := range mem[binaryHeader+8*n:] {
		all.Rating[i] = float32(v)
	}
	bf.All = all
	if err := checkRange(all.User, int32(nu), "user"); err != nil {
		bf.Close()
		return nil, fmt.Errorf("ratings: %s: %w", path, err)
	}
	if err := checkRange(all.Item, int32(ni), "item"); err != nil {
		bf.Close()
		return nil, fmt.Errorf("ratings: %s: %w", path, err)
	}
	return bf, nil
}

func checkRange(ids []int32, n int32, what string) error {
	for i, v := range ids {
		if v < 0 || v >= n {
			return fmt.Errorf("rating %d: %s id %d outside [0, %d)", i+1, what, v, n)
		}
	}
	return nil
}

// TrainSet returns the training ratings (the first Train).
func (b *BinaryFile) TrainSet() *Ratings { return b.All.Slice(0, b.Train) }

// TestSet returns the test ratings (after the first Train).
func (b *BinaryFile) TestSet() *Ratings { return b.All.Slice(b.Train, b.All.Len()) }

// Close unmaps the file; the id slices must not be used after.
func (b *BinaryFile) Close() error {
	if b.mem == nil {
		return nil
	}
	err := syscall.Munmap(b.mem)
	b.mem, b.All = nil, nil
	return err
}

var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()
