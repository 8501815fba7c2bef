package modelfile

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"math"

	"github.com/fathom-ml/fathom/data"
)

// Fingerprint returns the SHA-256 (hex) of a table's rows: its shape, the
// features as little-endian float32 bits, then the class names and labels
// or the numeric targets. Two tables have the same fingerprint when they
// hold the same rows in the same order, whatever file they came from.
func Fingerprint(t *data.Table) string {
	h := sha256.New()
	u64 := func(h hash.Hash, v uint64) {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	u64(h, uint64(t.Rows))
	u64(h, uint64(t.Cols))
	buf := make([]byte, 0, 4096)
	flush := func() {
		h.Write(buf)
		buf = buf[:0]
	}
	for _, v := range t.X {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		if len(buf) >= 4092 {
			flush()
		}
	}
	flush()
	u64(h, uint64(len(t.Classes)))
	for _, c := range t.Classes {
		u64(h, uint64(len(c)))
		h.Write([]byte(c))
	}
	for _, l := range t.Labels {
		u64(h, uint64(l))
	}
	for _, y := range t.Y {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(y))
		if len(buf) >= 4092 {
			flush()
		}
	}
	flush()
	return hex.EncodeToString(h.Sum(nil))
}
