package yamltree

import (
	"reflect"
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

type shared struct {
	Rate float64 `yaml:"rate"`
}

type keysConfig struct {
	shared `yaml:",inline"`
	Epochs int `yaml:"epochs"`
	Layers []struct{ Out int }
	Extra  map[string]any  `yaml:"extra"`
	Hooked struct{ X int } `yaml:"hooked"`
}

func TestCheckKeys(t *testing.T) {
	hook := func(n *yaml.Node, typ reflect.Type, path string) (*Error, bool) {
		if path == "hooked" {
			return nil, true // the hook accepts anything here
		}
		return nil, false
	}
	for _, c := range []struct{ text, want string }{
		{"rate: 0.5\nepochs: 3\nlayers: [{out: 2}]\nextra: {a: {b: 1}}\nhooked: 7\n", ""},
		{"epochs: 3\nbogus: 1\n", `line 2: unknown key "bogus" in the config (known keys: rate, epochs, layers, extra, hooked)`},
		{"epochs: 2.5\n", "line 1: epochs: want an integer"},
		{"layers: {out: 2}\n", "line 1: layers: want a list"},
		{"layers: [{out: 2, in: 3}]\n", `unknown key "in" in layers[0]`},
		{"rate: {a: 1}\n", "rate: want a single value, got a mapping"},
	} {
		err := CheckKeys(parse(t, c.text).Content[0], reflect.TypeFor[keysConfig](), "", hook)
		if c.want == "" {
			if err != nil {
				t.Errorf("%q: %v", c.text, err)
			}
		} else if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.text, err, c.want)
		}
	}
}
