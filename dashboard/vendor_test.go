package dashboard

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
)

// TestVendoredFilesMatchRecord: the embedded uPlot files are the ones
// VENDOR.md records (scripts/refresh-dashboard-vendor.sh writes both).
func TestVendoredFilesMatchRecord(t *testing.T) {
	record, err := assets.ReadFile("assets/vendor/VENDOR.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"uPlot.iife.min.js", "uPlot.min.css", "uPlot.LICENSE"} {
		b, err := assets.ReadFile("assets/vendor/" + name)
		if err != nil {
			t.Fatal(err)
		}
		sum := fmt.Sprintf("%x", sha256.Sum256(b))
		if !strings.Contains(string(record), "| "+name+" | ") || !strings.Contains(string(record), sum) {
			t.Errorf("%s (sha256 %s) is not as VENDOR.md records it: run scripts/refresh-dashboard-vendor.sh", name, sum)
		}
	}
}
