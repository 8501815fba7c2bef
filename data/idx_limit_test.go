package data

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// idxBomb returns a gzip-compressed IDX file of unsigned bytes whose header
// declares declared bytes of data ([declared/1024, 32, 32]) but which holds
// only have zero bytes of it: a few KiB on disk.
func idxBomb(declared, have int) []byte {
	h := []byte{0, 0, byte(IDXUint8), 3}
	for _, d := range []int{declared / 1024, 32, 32} {
		h = binary.BigEndian.AppendUint32(h, uint32(d))
	}
	return gzipped(append(h, make([]byte, have)...))
}

func TestIDXGzipBombRefused(t *testing.T) {
	t.Setenv(MaxInputBytesEnv, "")
	dir := t.TempDir()
	p := filepath.Join(dir, "bomb-idx3-ubyte.gz")
	// 1 GiB declared: under the 16 GiB cap on declared data, but 5 GiB
	// once its float32 copy is counted, over the 4 GiB default.
	if err := os.WriteFile(p, idxBomb(1<<30, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ReadIDX(p)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "over the limit of 4294967296 bytes") ||
		!strings.Contains(err.Error(), "need 5368709120 bytes of memory") || !strings.Contains(err.Error(), MaxInputBytesEnv) {
		t.Fatalf("got %v", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 8<<20 {
		t.Errorf("refusing the bomb allocated %d bytes", got)
	}

	// With a small explicit limit, the same holds for smaller bombs.
	if err := os.WriteFile(p, idxBomb(1<<20, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadIDXLimit(p, 1<<20); err == nil || !strings.Contains(err.Error(), "over the limit of 1048576 bytes") {
		t.Fatalf("got %v", err)
	}
	// Within the limit, a stream shorter than its header declares fails
	// when it ends, having allocated about what it held.
	runtime.ReadMemStats(&before)
	_, err = ReadIDXLimit(p, 64<<20)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "need 1048576 bytes of data, found 4096") {
		t.Fatalf("got %v", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("a 4 KiB stream declaring 1 MiB allocated %d bytes", got)
	}
}

func TestIDXLimitCountsFloatCopy(t *testing.T) {
	b := idxBomb(1024, 1024) // [1, 32, 32] bytes, all there
	// 1024 bytes of data and 4096 of float32 copy.
	if _, err := DecodeIDXLimit(bytes.NewReader(b), "x", 5119); err == nil || !strings.Contains(err.Error(), "need 5120 bytes of memory (1024 of data") {
		t.Fatalf("got %v", err)
	}
	if _, err := DecodeIDXLimit(bytes.NewReader(b), "x", 5120); err != nil {
		t.Fatal(err)
	}
	// Types other than bytes also count their Go slice.
	f := []byte{0, 0, byte(IDXFloat64), 1, 0, 0, 0, 2}
	f = append(f, make([]byte, 16)...)
	if _, err := DecodeIDXLimit(bytes.NewReader(f), "x", 16+16+8-1); err == nil || !strings.Contains(err.Error(), "need 40 bytes") {
		t.Fatalf("got %v", err)
	}
}

func TestIDXLimitFromEnv(t *testing.T) {
	b := idxBomb(1024, 1024)
	t.Setenv(MaxInputBytesEnv, "4KiB")
	if _, err := DecodeIDX(bytes.NewReader(b), "x"); err == nil || !strings.Contains(err.Error(), "over the limit of 4096 bytes") {
		t.Fatalf("got %v", err)
	}
	t.Setenv(MaxInputBytesEnv, "5120")
	if _, err := DecodeIDX(bytes.NewReader(b), "x"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"lots", "-1", "0", "99999999999TiB"} {
		t.Setenv(MaxInputBytesEnv, bad)
		if _, err := DecodeIDX(bytes.NewReader(b), "x"); err == nil || !strings.Contains(err.Error(), MaxInputBytesEnv) {
			t.Fatalf("%s=%s: got %v", MaxInputBytesEnv, bad, err)
		}
	}
}

func TestIDXPlainSizeMustMatchHeader(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x-idx1-ubyte")
	// Declares 1 GiB, holds 3 bytes: refused from the file size alone.
	if err := os.WriteFile(p, []byte{0, 0, byte(IDXUint8), 1, 0x40, 0, 0, 0, 1, 2, 3}, 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ReadIDXLimit(p, 1<<40)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "the file is 11 bytes but its header declares dimensions [1073741824] of ubyte, 1073741824 bytes of data after a 8-byte header") {
		t.Fatalf("got %v", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("allocated %d bytes", got)
	}
}

func TestLoadMNISTLimit(t *testing.T) {
	dir := t.TempDir()
	writeMNIST(t, dir, "train", make([]uint8, 2*4*4), 2, 4, 4, []uint8{0, 1}, true)
	// Images: 32 bytes + 128 of float32; labels: 2 + 8.
	if _, err := LoadMNIST(dir, "train", MNISTOptions{MaxBytes: 169}); err == nil || !strings.Contains(err.Error(), "labels") || !strings.Contains(err.Error(), "over the limit of 9 bytes") {
		t.Fatalf("got %v", err)
	}
	if _, err := LoadMNIST(dir, "train", MNISTOptions{MaxBytes: 170}); err != nil {
		t.Fatal(err)
	}
}
