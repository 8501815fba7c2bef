package cpufeat

import "testing"

func TestLevels(t *testing.T) {
	ls := Levels()
	if len(ls) == 0 || ls[0] != Generic {
		t.Fatalf("Levels() = %v, want Generic first", ls)
	}
	if ls[len(ls)-1] != Best() {
		t.Errorf("Levels() = %v ends below Best() = %v", ls, Best())
	}
	for _, l := range ls {
		if !Has(l) {
			t.Errorf("Levels() lists %v but Has(%v) is false", l, l)
		}
	}
	if Has(Level(99)) {
		t.Error("Has(99) is true")
	}
	t.Logf("levels: %v", ls)
}

func TestString(t *testing.T) {
	for l, want := range map[Level]string{Generic: "go", AVX2FMA: "avx2", AVX512: "avx512", Level(-1): "unknown"} {
		if got := l.String(); got != want {
			t.Errorf("Level(%d).String() = %q, want %q", int(l), got, want)
		}
	}
}
