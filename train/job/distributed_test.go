package job

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"testing"

	"github.com/fathom-ml/fathom/nn"
	"github.com/fathom-ml/fathom/tensor"
)

// TestWeightsSHA256 pins the fingerprint's byte layout: the state dict's
// tensors in nn.StateEntries order, float32 elements as 4 little-endian
// bytes each, nothing else.
func TestWeightsSHA256(t *testing.T) {
	m := nn.NewLinear(tensor.NewRNG(1), 3, 2)
	h := sha256.New()
	for _, e := range nn.StateEntries(m) {
		for _, v := range e.Tensor.Float32s() {
			var b [4]byte
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
			h.Write(b[:])
		}
	}
	want := hex.EncodeToString(h.Sum(nil))
	if got := WeightsSHA256(m); got != want {
		t.Fatalf("WeightsSHA256 = %s, want %s", got, want)
	}
	m.Parameters()[0].Float32s()[0] += 1e-6
	if WeightsSHA256(m) == want {
		t.Error("a changed weight left the fingerprint unchanged")
	}
}
