//go:build unix

package parquetpage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMappedFileTruncated: a mapped file cut short by someone else gives
// an error naming it, not a crash.
func TestMappedFileTruncated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "part.parquet")
	if err := os.WriteFile(path, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := OpenMapped(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	buf := make([]byte, 4096)
	if _, err := m.ReadAt(buf, 1<<19); err != nil {
		t.Fatalf("before truncation: %v", err)
	}
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	_, err = m.ReadAt(buf, 1<<19+8192)
	if err == nil || !strings.Contains(err.Error(), "changed while mapped") || !strings.Contains(err.Error(), "part.parquet") {
		t.Fatalf("after truncation: %v", err)
	}
}
