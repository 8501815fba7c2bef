package feature

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// jsonFloat is a float64 that JSON carries as a number, or as one of the
// strings "NaN", "Infinity", "-Infinity" (JSON has no such numbers; Spark's
// own JSON params write them so). The parameters that default to or often
// hold them (Imputer's missingValue, Normalizer's p, Bucketizer's splits)
// use it, so that a JSON config can set them.
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"NaN"`), nil
	case math.IsInf(v, 1):
		return []byte(`"Infinity"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Infinity"`), nil
	}
	return []byte(strconv.FormatFloat(v, 'g', -1, 64)), nil
}

func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		switch s {
		case "NaN":
			*f = jsonFloat(math.NaN())
		case "Infinity", "+Infinity", "Inf", "+Inf":
			*f = jsonFloat(math.Inf(1))
		case "-Infinity", "-Inf":
			*f = jsonFloat(math.Inf(-1))
		default:
			return fmt.Errorf("%q is not a number (nor NaN, Infinity, -Infinity)", s)
		}
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = jsonFloat(v)
	return nil
}

func toJSONFloats(v []float64) []jsonFloat {
	if v == nil {
		return nil
	}
	out := make([]jsonFloat, len(v))
	for i, x := range v {
		out[i] = jsonFloat(x)
	}
	return out
}

func fromJSONFloats(v []jsonFloat) []float64 {
	if v == nil {
		return nil
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// MarshalJSON writes the parameters, missingValue as a number or "NaN".
func (p *Imputer) MarshalJSON() ([]byte, error) {
	type plain Imputer
	return json.Marshal(struct {
		*plain
		MissingValue jsonFloat `json:"missingValue"`
	}{(*plain)(p), jsonFloat(p.MissingValue)})
}

// UnmarshalJSON reads the parameters over the current ones; missingValue
// may be a number or "NaN".
func (p *Imputer) UnmarshalJSON(b []byte) error {
	type plain Imputer
	mv := jsonFloat(p.MissingValue)
	if err := strictJSON(b, &struct {
		*plain
		MissingValue *jsonFloat `json:"missingValue"`
	}{(*plain)(p), &mv}); err != nil {
		return err
	}
	p.MissingValue = float64(mv)
	return nil
}

// MarshalJSON writes the parameters, p as a number or "Infinity".
func (n *Normalizer) MarshalJSON() ([]byte, error) {
	type plain Normalizer
	return json.Marshal(struct {
		*plain
		P jsonFloat `json:"p"`
	}{(*plain)(n), jsonFloat(n.P)})
}

// UnmarshalJSON reads the parameters over the current ones; p may be a
// number or "Infinity".
func (n *Normalizer) UnmarshalJSON(b []byte) error {
	type plain Normalizer
	p := jsonFloat(n.P)
	if err := strictJSON(b, &struct {
		*plain
		P *jsonFloat `json:"p"`
	}{(*plain)(n), &p}); err != nil {
		return err
	}
	n.P = float64(p)
	return nil
}

// MarshalJSON writes the parameters, the splits as numbers or
// "-Infinity", "Infinity".
func (bk *Bucketizer) MarshalJSON() ([]byte, error) {
	type plain Bucketizer
	return json.Marshal(struct {
		*plain
		Splits []jsonFloat `json:"splits"`
	}{(*plain)(bk), toJSONFloats(bk.Splits)})
}

// UnmarshalJSON reads the parameters over the current ones; the splits
// may hold "-Infinity" and "Infinity".
func (bk *Bucketizer) UnmarshalJSON(b []byte) error {
	type plain Bucketizer
	s := toJSONFloats(bk.Splits)
	if err := strictJSON(b, &struct {
		*plain
		Splits *[]jsonFloat `json:"splits"`
	}{(*plain)(bk), &s}); err != nil {
		return err
	}
	bk.Splits = fromJSONFloats(s)
	return nil
}

// strictJSON decodes b into v, unknown fields an error (as ml.DecodeParams).
func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
