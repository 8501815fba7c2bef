package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

type testData struct {
	Source       string   `yaml:"source"`
	Train        string   `yaml:"train"`
	Test         string   `yaml:"test"`
	TestFraction *float64 `yaml:"test_fraction"`
}

type testConfig struct {
	Data   testData `yaml:"data"`
	Epochs int      `yaml:"epochs"`
}

var testSpec = Spec{
	Type: reflect.TypeFor[testConfig](),
	What: "data, epochs",
	Renames: []Rename{
		{Old: "data.test", New: "data.test_fraction", When: func(v *yaml.Node) bool { return v.ShortTag() == "!!float" }},
		{Old: "data.test_path", New: "data.test"},
		{Old: "data.path", New: "data.train"},
	},
}

func parse(t *testing.T, text string, sets ...string) (testConfig, string, error) {
	t.Helper()
	var warn bytes.Buffer
	s := testSpec
	s.Warn = &warn
	var c testConfig
	root, err := Parse([]byte(text), "c.yaml", sets, s)
	if err == nil {
		err = Decode(root, "c.yaml", &c)
	}
	return c, warn.String(), err
}

func TestErrorFormat(t *testing.T) {
	for _, test := range []struct {
		e    Error
		want string
	}{
		{Error{File: "a.yaml", Line: 3, Key: "data.train", Msg: "no such file"}, "a.yaml:3: data.train: no such file"},
		{Error{File: "a.yaml", Key: "epochs", Msg: "want 1 or more"}, "a.yaml: epochs: want 1 or more"},
		{Error{File: "a.yaml", Line: 2, Msg: "want one YAML document"}, "a.yaml:2: want one YAML document"},
		{Error{Line: 4, Msg: "bad"}, "line 4: bad"},
		{Error{Msg: "bad"}, "bad"},
	} {
		if got := test.e.Error(); got != test.want {
			t.Errorf("%+v: %q, want %q", test.e, got, test.want)
		}
	}
}

func TestRenamedKeys(t *testing.T) {
	newC, newWarn, err := parse(t, "data: {source: csv, train: a.csv, test: b.csv}\nepochs: 2\n")
	if err != nil || newWarn != "" {
		t.Fatalf("new names: %v, warnings %q", err, newWarn)
	}
	oldC, oldWarn, err := parse(t, "data: {source: csv, path: a.csv, test_path: b.csv}\nepochs: 2\n")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(oldC, newC) {
		t.Errorf("old names give %+v, new names %+v", oldC, newC)
	}
	for _, old := range []string{"data.path", "data.test_path"} {
		if n := strings.Count(oldWarn, old+" is deprecated"); n != 1 {
			t.Errorf("%s warned %d times in %q, want once", old, n, oldWarn)
		}
	}
	if lines := strings.Count(oldWarn, "\n"); lines != 2 {
		t.Errorf("%d warning lines, want 2: %q", lines, oldWarn)
	}
	if !strings.HasPrefix(oldWarn, "c.yaml:1: ") {
		t.Errorf("warning %q does not name the file and line", oldWarn)
	}

	// A number under data.test is the fraction; a path is the test file.
	frac, warn, err := parse(t, "data: {source: iris, test: 0.3}\n")
	if err != nil || frac.Data.TestFraction == nil || *frac.Data.TestFraction != 0.3 || frac.Data.Test != "" {
		t.Fatalf("data.test 0.3: %+v, %v", frac.Data, err)
	}
	if strings.Count(warn, "data.test is deprecated: use data.test_fraction") != 1 {
		t.Errorf("warnings %q", warn)
	}
	frac2, warn, err := parse(t, "data: {source: iris, test_fraction: 0.3}\n")
	if err != nil || warn != "" || !reflect.DeepEqual(frac, frac2) {
		t.Errorf("test_fraction: %+v, %v, warnings %q; data.test gave %+v", frac2.Data, err, warn, frac.Data)
	}
}

func TestRenamedOverrides(t *testing.T) {
	c, warn, err := parse(t, "data: {source: csv}\n", "data.path=x.csv", "data.test=0.25")
	if err != nil {
		t.Fatal(err)
	}
	if c.Data.Train != "x.csv" || c.Data.TestFraction == nil || *c.Data.TestFraction != 0.25 {
		t.Errorf("overrides of old keys: %+v", c.Data)
	}
	if strings.Count(warn, "is deprecated") != 2 || !strings.Contains(warn, "--set data.path=x.csv: data.path is deprecated: use data.train") {
		t.Errorf("warnings %q", warn)
	}
	// A path under data.test is the new key: no warning.
	c, warn, err = parse(t, "data: {source: csv}\n", "data.test=t.csv")
	if err != nil || c.Data.Test != "t.csv" || warn != "" {
		t.Errorf("data.test=t.csv: %+v, %v, %q", c.Data, err, warn)
	}
}

func TestBothNamesRefused(t *testing.T) {
	_, _, err := parse(t, "data:\n  source: csv\n  train: a.csv\n  path: b.csv\n")
	var e *Error
	if !errors.As(err, &e) || e.Line != 4 || e.Key != "data.path" || !strings.Contains(err.Error(), "c.yaml:4: data.path: the old name of data.train") {
		t.Errorf("both names: %v", err)
	}
}

func TestRefusals(t *testing.T) {
	var bomb strings.Builder
	bomb.WriteString("data:\n  source: iris\nx:\n  - &l0 lol\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&bomb, "  - &l%d [%s]\n", i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 10), ", "))
	}
	for _, test := range []struct {
		name, text string
		sets       []string
		want       string
	}{
		{"alias bomb", bomb.String(), nil, "too many aliases"},
		{"oversize", "epochs: 1\n" + strings.Repeat("# padding\n", MaxBytes/10+1), nil, fmt.Sprintf("over %d bytes", MaxBytes)},
		{"unknown key", "data:\n  source: iris\n  bogus: 1\n", nil, `c.yaml:3: unknown key "bogus" in data`},
		{"unknown key by --set", "epochs: 1\n", []string{"data.bogus=1"}, "(given with --set)"},
		{"bad --set", "epochs: 1\n", []string{"epochs"}, "--set epochs: want key=value"},
		{"not a mapping", "- 1\n", nil, "c.yaml:1: the config must be a mapping of keys (data, epochs)"},
		{"syntax error", "epochs: [1\n", nil, "c.yaml: "},
		{"float for an integer", "epochs: 1.5\n", nil, "c.yaml:1: epochs: want an integer"},
	} {
		_, _, err := parse(t, test.text, test.sets...)
		var e *Error
		if !errors.As(err, &e) || e.File != "c.yaml" || !strings.Contains(err.Error(), test.want) {
			t.Errorf("%s: %v, want an *Error of c.yaml containing %q", test.name, err, test.want)
		}
	}
}

// FuzzParse: any text parses or gives an *Error of the file, never a
// panic.
func FuzzParse(f *testing.F) {
	f.Add("data: {source: csv, path: a.csv, test: 0.3}\nepochs: 2\n")
	f.Add("data: {train: a.csv, test_path: b.csv}\n")
	f.Add("x: &a [*a]\n")
	f.Fuzz(func(t *testing.T, text string) {
		s := testSpec
		s.Warn = io.Discard
		if _, err := Parse([]byte(text), "f.yaml", nil, s); err != nil {
			var e *Error
			if !errors.As(err, &e) || e.File != "f.yaml" {
				t.Fatalf("%q: %v is not an *Error of f.yaml", text, err)
			}
		}
	})
}

func TestRunDir(t *testing.T) {
	for in, want := range map[string]string{
		"examples/iris.yaml": filepath.Join("runs", "iris"),
		"/a/b/fit.v2.yml":    filepath.Join("runs", "fit.v2"),
		"noext":              filepath.Join("runs", "noext"),
	} {
		if got := RunDir(in); got != want {
			t.Errorf("RunDir(%q) = %q, want %q", in, got, want)
		}
	}
}
