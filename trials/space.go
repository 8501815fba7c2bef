package trials

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// KV is one config key of a trial and its value, as YAML text (what
// `--set key=value` takes).
type KV struct {
	Key, Value string
}

// Trial is one point of the search: an index and the overrides that make
// its config from the base config.
type Trial struct {
	ID     int
	Params []KV
}

// Overrides returns the trial's params as "key=value" overrides.
func (t Trial) Overrides() []string {
	out := make([]string, len(t.Params))
	for i, p := range t.Params {
		out[i] = p.Key + "=" + p.Value
	}
	return out
}

// Param is one searched key: a list of values (a grid axis) or a
// distribution to draw from (a random axis).
type Param struct {
	Key    string
	Values []string // grid
	Dist   Dist     // random
}

// Dist is a distribution of values for random search.
type Dist interface {
	// Sample draws a value, formatted as YAML.
	Sample(r *rand.Rand) string
	// String is the distribution as written on the command line.
	String() string
	// Log says the values spread over orders of magnitude (plots put
	// them on a log axis).
	Log() bool
}

// uniform is uniform(lo, hi) on the reals.
type uniform struct{ lo, hi float64 }

func (u uniform) Sample(r *rand.Rand) string { return formatFloat(u.lo + r.Float64()*(u.hi-u.lo)) }
func (u uniform) String() string             { return fmt.Sprintf("uniform(%g,%g)", u.lo, u.hi) }
func (u uniform) Log() bool                  { return false }

// logUniform is loguniform(lo, hi): log x uniform on [log lo, log hi].
type logUniform struct{ lo, hi float64 }

func (u logUniform) Sample(r *rand.Rand) string {
	a, b := math.Log(u.lo), math.Log(u.hi)
	return formatFloat(math.Exp(a + r.Float64()*(b-a)))
}
func (u logUniform) String() string { return fmt.Sprintf("loguniform(%g,%g)", u.lo, u.hi) }
func (u logUniform) Log() bool      { return true }

// randInt is randint(lo, hi): an integer in [lo, hi], both included.
type randInt struct{ lo, hi int64 }

func (u randInt) Sample(r *rand.Rand) string {
	return strconv.FormatInt(u.lo+r.Int64N(u.hi-u.lo+1), 10)
}
func (u randInt) String() string { return fmt.Sprintf("randint(%d,%d)", u.lo, u.hi) }
func (u randInt) Log() bool      { return false }

// choice is choice(v1, v2, ...): one of the values, equally likely.
type choice struct{ values []string }

func (c choice) Sample(r *rand.Rand) string { return c.values[r.IntN(len(c.values))] }
func (c choice) String() string             { return "choice(" + strings.Join(c.values, ",") + ")" }
func (c choice) Log() bool                  { return false }

// formatFloat writes a float with the fewest digits that read back the
// same, as YAML reads it.
func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// splitKeyValue splits "key=rest" at the first '='.
func splitKeyValue(s, flag string) (string, string, error) {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" || strings.TrimSpace(v) == "" {
		return "", "", fmt.Errorf("%s %q: want key=%s", flag, s, map[string]string{
			"--grid": "v1,v2,...", "--random": "dist(...)"}[flag])
	}
	return k, strings.TrimSpace(v), nil
}

// splitList splits a comma-separated list, keeping commas inside
// brackets, braces, parentheses and quotes ("[16,32],[64,64]" is two
// values): a value is YAML text.
func splitList(s string) ([]string, error) {
	var out []string
	depth, start := 0, 0
	var quote rune
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
		case r == '[' || r == '{' || r == '(':
			depth++
		case r == ']' || r == '}' || r == ')':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("unbalanced %q at offset %d", r, i)
			}
		case r == ',' && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	if depth != 0 || quote != 0 {
		return nil, errors.New("unbalanced brackets or quotes")
	}
	out = append(out, strings.TrimSpace(s[start:]))
	for i, v := range out {
		if v == "" {
			return nil, fmt.Errorf("value %d is empty", i+1)
		}
	}
	return out, nil
}

// ParseGrid parses a --grid flag: "key=v1,v2,...", each value YAML text
// (lists in brackets keep their commas).
func ParseGrid(s string) (Param, error) {
	k, v, err := splitKeyValue(s, "--grid")
	if err != nil {
		return Param{}, err
	}
	vals, err := splitList(v)
	if err != nil {
		return Param{}, fmt.Errorf("--grid %s: %v", k, err)
	}
	return Param{Key: k, Values: vals}, nil
}

// ParseRandom parses a --random flag: "key=dist(args)" with dist one of
// uniform(lo,hi), loguniform(lo,hi) (lo > 0), randint(lo,hi) (both
// included) and choice(v1,v2,...).
func ParseRandom(s string) (Param, error) {
	k, v, err := splitKeyValue(s, "--random")
	if err != nil {
		return Param{}, err
	}
	bad := func(format string, a ...any) (Param, error) {
		return Param{}, fmt.Errorf("--random %s=%s: %s", k, v, fmt.Sprintf(format, a...))
	}
	name, rest, ok := strings.Cut(v, "(")
	if !ok || !strings.HasSuffix(rest, ")") {
		return bad("want uniform(lo,hi), loguniform(lo,hi), randint(lo,hi) or choice(v1,v2,...)")
	}
	args, err := splitList(strings.TrimSuffix(rest, ")"))
	if err != nil {
		return bad("%v", err)
	}
	name = strings.TrimSpace(name)
	if name == "choice" {
		return Param{Key: k, Dist: choice{args}}, nil
	}
	if len(args) != 2 {
		return bad("%s takes two arguments (lo,hi), got %d", name, len(args))
	}
	switch name {
	case "uniform", "loguniform":
		lo, err1 := strconv.ParseFloat(args[0], 64)
		hi, err2 := strconv.ParseFloat(args[1], 64)
		if err := errors.Join(err1, err2); err != nil || math.IsInf(lo, 0) || math.IsInf(hi, 0) || math.IsNaN(lo) || math.IsNaN(hi) {
			return bad("bounds must be finite numbers")
		}
		if !(lo < hi) {
			return bad("want lo < hi")
		}
		if name == "uniform" {
			return Param{Key: k, Dist: uniform{lo, hi}}, nil
		}
		if lo <= 0 {
			return bad("loguniform needs lo > 0")
		}
		return Param{Key: k, Dist: logUniform{lo, hi}}, nil
	case "randint":
		lo, err1 := strconv.ParseInt(args[0], 10, 64)
		hi, err2 := strconv.ParseInt(args[1], 10, 64)
		if errors.Join(err1, err2) != nil {
			return bad("bounds must be integers")
		}
		if lo > hi || hi-lo >= math.MaxInt64 {
			return bad("want lo <= hi")
		}
		return Param{Key: k, Dist: randInt{lo, hi}}, nil
	}
	return bad("unknown distribution %q (uniform, loguniform, randint, choice)", name)
}

// MaxTrials bounds the number of trials a search may expand to.
const MaxTrials = 100_000

// Space is a search: grid axes (every combination) and random axes (N
// draws from the seeded stream). With both, every grid point is combined
// with each of the N draws.
type Space struct {
	Grid   []Param
	Random []Param
	// N is the number of random draws (ignored without random axes).
	N int
	// Seed seeds the draws: the same Seed gives the same trials, and
	// trial i's draw does not depend on N.
	Seed uint64
}

// Trials expands the space into its trials, numbered from 0: the grid in
// row-major order of its axes (the last axis fastest), and for each grid
// point the N random draws.
func (s Space) Trials() ([]Trial, error) {
	seen := map[string]bool{}
	for _, p := range append(append([]Param(nil), s.Grid...), s.Random...) {
		if seen[p.Key] {
			return nil, fmt.Errorf("key %s is searched twice", p.Key)
		}
		seen[p.Key] = true
	}
	points := 1
	for _, p := range s.Grid {
		if len(p.Values) == 0 {
			return nil, fmt.Errorf("--grid %s: no values", p.Key)
		}
		points *= len(p.Values)
		if points > MaxTrials {
			return nil, fmt.Errorf("the grid has more than %d points", MaxTrials)
		}
	}
	draws := 1
	if len(s.Random) > 0 {
		if s.N < 1 {
			return nil, errors.New("random search needs --trials N (at least 1)")
		}
		draws = s.N
	}
	if len(s.Grid) == 0 && len(s.Random) == 0 {
		return nil, errors.New("nothing to search: give --grid key=v1,v2,... or --random key=dist(...) --trials N")
	}
	if points*draws > MaxTrials {
		return nil, fmt.Errorf("%d trials: more than %d", points*draws, MaxTrials)
	}
	out := make([]Trial, 0, points*draws)
	idx := make([]int, len(s.Grid))
	for range points {
		for d := range draws {
			t := Trial{ID: len(out)}
			for a, p := range s.Grid {
				t.Params = append(t.Params, KV{p.Key, p.Values[idx[a]]})
			}
			// Draw d's stream depends on the seed and d alone.
			r := rand.New(rand.NewPCG(s.Seed, uint64(d)))
			for _, p := range s.Random {
				t.Params = append(t.Params, KV{p.Key, p.Dist.Sample(r)})
			}
			out = append(out, t)
		}
		for a := len(idx) - 1; a >= 0; a-- { // next grid point
			if idx[a]++; idx[a] < len(s.Grid[a].Values) {
				break
			}
			idx[a] = 0
		}
	}
	return out, nil
}
