package yamltree

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func parse(t *testing.T, text string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(text), &n); err != nil {
		t.Fatal(err)
	}
	return &n
}

func TestApplyOverride(t *testing.T) {
	root := parse(t, "a:\n  b: 1\nlist: [x, {k: 2}]\n").Content[0] // the mapping, as the readers pass it
	for _, o := range []string{"a.b=3", "a.c.d=[1, 2]", "list.1.k=5"} {
		if err := ApplyOverride(root, o); err != nil {
			t.Fatalf("%s: %v", o, err)
		}
	}
	var got struct {
		A struct {
			B int
			C struct{ D []int }
		}
		List []any
	}
	if err := root.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.A.B != 3 || len(got.A.C.D) != 2 || got.List[1].(map[string]any)["k"] != 5 {
		t.Fatalf("decoded %+v", got)
	}
	if err := ApplyOverride(root, "no-equals"); err == nil {
		t.Fatal("an override without = accepted")
	}
}

func TestCheckAliasesBound(t *testing.T) {
	var b strings.Builder
	b.WriteString("l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 8; i++ {
		b.WriteString("l" + string(rune('0'+i)) + ": &l" + string(rune('0'+i)) + " [")
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*l" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	err := CheckAliases(parse(t, b.String()), 100_000)
	if err == nil || err.Line == 0 || !strings.Contains(err.Msg, "too many aliases") {
		t.Fatalf("err = %v", err)
	}
	if err := CheckAliases(parse(t, "a: &x [1, 2]\nb: *x\n"), 100); err != nil {
		t.Fatalf("a small alias: %v", err)
	}
}
