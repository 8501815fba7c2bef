package trials

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseGrid(t *testing.T) {
	for _, test := range []struct {
		in   string
		key  string
		vals []string
		err  string
	}{
		{in: "optimizer.lr=0.1,0.01", key: "optimizer.lr", vals: []string{"0.1", "0.01"}},
		{in: "model.0.out=16", key: "model.0.out", vals: []string{"16"}},
		{in: "data.shape=[1,28,28],[784]", key: "data.shape", vals: []string{"[1,28,28]", "[784]"}},
		{in: `loss="a,b",mse`, key: "loss", vals: []string{`"a,b"`, "mse"}},
		{in: "optimizer.lr", err: "want key=v1,v2"},
		{in: "=1,2", err: "want key=v1,v2"},
		{in: "k=1,,2", err: "value 2 is empty"},
		{in: "k=[1,2", err: "unbalanced"},
	} {
		p, err := ParseGrid(test.in)
		if test.err != "" {
			if err == nil || !strings.Contains(err.Error(), test.err) {
				t.Errorf("ParseGrid(%q): error %v, want one with %q", test.in, err, test.err)
			}
			continue
		}
		if err != nil || p.Key != test.key || !slices.Equal(p.Values, test.vals) {
			t.Errorf("ParseGrid(%q) = %q %q, %v; want %q %q", test.in, p.Key, p.Values, err, test.key, test.vals)
		}
	}
}

func TestParseRandom(t *testing.T) {
	for _, test := range []struct{ in, dist, err string }{
		{in: "lr=uniform(0,1)", dist: "uniform(0,1)"},
		{in: "lr=loguniform(1e-4, 0.1)", dist: "loguniform(0.0001,0.1)"},
		{in: "seed=randint(1,1000)", dist: "randint(1,1000)"},
		{in: "opt=choice(adam,sgd)", dist: "choice(adam,sgd)"},
		{in: "lr=loguniform(0,1)", err: "lo > 0"},
		{in: "lr=uniform(1,1)", err: "lo < hi"},
		{in: "lr=uniform(1)", err: "two arguments"},
		{in: "lr=uniform(a,1)", err: "finite numbers"},
		{in: "lr=normal(0,1)", err: "unknown distribution"},
		{in: "lr=0.1", err: "want uniform"},
		{in: "n=randint(1.5,3)", err: "integers"},
	} {
		p, err := ParseRandom(test.in)
		if test.err != "" {
			if err == nil || !strings.Contains(err.Error(), test.err) {
				t.Errorf("ParseRandom(%q): error %v, want one with %q", test.in, err, test.err)
			}
			continue
		}
		if err != nil || p.Dist.String() != test.dist {
			t.Errorf("ParseRandom(%q) = %v, %v; want %s", test.in, p.Dist, err, test.dist)
		}
	}
}

func TestGridOrder(t *testing.T) {
	s := Space{Grid: []Param{{Key: "a", Values: []string{"1", "2"}}, {Key: "b", Values: []string{"x", "y", "z"}}}}
	ts, err := s.Trials()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, tr := range ts {
		if tr.ID != i {
			t.Errorf("trial %d has ID %d", i, tr.ID)
		}
		got = append(got, strings.Join(tr.Overrides(), " "))
	}
	want := []string{"a=1 b=x", "a=1 b=y", "a=1 b=z", "a=2 b=x", "a=2 b=y", "a=2 b=z"}
	if !slices.Equal(got, want) {
		t.Errorf("grid trials %q, want %q", got, want)
	}
}

// TestRandomDraws checks that draws are reproducible from the seed, that
// draw i does not depend on the number of trials, that other seeds give
// other draws, and that values fall in their ranges.
func TestRandomDraws(t *testing.T) {
	lr, _ := ParseRandom("lr=loguniform(1e-4,0.1)")
	n, _ := ParseRandom("n=randint(3,5)")
	c, _ := ParseRandom("opt=choice(adam,sgd)")
	u, _ := ParseRandom("m=uniform(-1,1)")
	draw := func(seed uint64, count int) []Trial {
		ts, err := Space{Random: []Param{lr, n, c, u}, N: count, Seed: seed}.Trials()
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	a, b := draw(7, 200), draw(7, 10)
	for i := range b {
		if !slices.Equal(a[i].Overrides(), b[i].Overrides()) {
			t.Fatalf("draw %d differs with N: %v vs %v", i, a[i].Overrides(), b[i].Overrides())
		}
	}
	if slices.Equal(draw(8, 1)[0].Overrides(), a[0].Overrides()) {
		t.Error("seeds 7 and 8 drew the same trial")
	}
	ints, opts := map[string]bool{}, map[string]bool{}
	for _, tr := range a {
		v, _ := strconv.ParseFloat(tr.Params[0].Value, 64)
		if !(v >= 1e-4 && v <= 0.1) {
			t.Errorf("loguniform(1e-4,0.1) drew %v", v)
		}
		ints[tr.Params[1].Value] = true
		opts[tr.Params[2].Value] = true
		if m, _ := strconv.ParseFloat(tr.Params[3].Value, 64); !(m >= -1 && m < 1) {
			t.Errorf("uniform(-1,1) drew %v", m)
		}
	}
	if len(ints) != 3 || !ints["3"] || !ints["5"] || len(opts) != 2 {
		t.Errorf("200 draws: randint(3,5) gave %v, choice gave %v", ints, opts)
	}
	// Log-uniform: about a third of the draws in each decade of three.
	low := 0
	for _, tr := range a {
		if v, _ := strconv.ParseFloat(tr.Params[0].Value, 64); v < 1e-3 {
			low++
		}
	}
	if math.Abs(float64(low)/200-1.0/3) > 0.12 {
		t.Errorf("loguniform(1e-4,0.1): %d of 200 draws below 1e-3, want about 67", low)
	}
}

func TestGridTimesRandom(t *testing.T) {
	lr, _ := ParseRandom("lr=uniform(0,1)")
	ts, err := Space{Grid: []Param{{Key: "a", Values: []string{"1", "2"}}}, Random: []Param{lr}, N: 3, Seed: 1}.Trials()
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 6 {
		t.Fatalf("2 grid points × 3 draws: %d trials", len(ts))
	}
	for d := range 3 { // each grid point gets the same draws
		if ts[d].Params[1] != ts[3+d].Params[1] || ts[d].Params[0].Value != "1" || ts[3+d].Params[0].Value != "2" {
			t.Errorf("draw %d: %v and %v", d, ts[d].Params, ts[3+d].Params)
		}
	}
}

func TestSpaceErrors(t *testing.T) {
	lr, _ := ParseRandom("lr=uniform(0,1)")
	big := make([]string, 1000)
	for i := range big {
		big[i] = strconv.Itoa(i)
	}
	for _, test := range []struct {
		s   Space
		err string
	}{
		{Space{}, "nothing to search"},
		{Space{Random: []Param{lr}}, "--trials N"},
		{Space{Grid: []Param{{Key: "lr", Values: []string{"1"}}}, Random: []Param{lr}, N: 1}, "searched twice"},
		{Space{Grid: []Param{{Key: "a", Values: big}, {Key: "b", Values: big}}}, "more than"},
	} {
		if _, err := test.s.Trials(); err == nil || !strings.Contains(err.Error(), test.err) {
			t.Errorf("%+v: error %v, want %q", test.s, err, test.err)
		}
	}
}
