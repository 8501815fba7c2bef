package linear

import (
	"encoding/json"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The shared Params decode from a config's flat keys (YAML, strictly) and
// from JSON, over the defaults.
func TestParamsDecodeFlat(t *testing.T) {
	e := NewLogisticRegression()
	dec := yaml.NewDecoder(strings.NewReader("regParam: 0.5\nfamily: multinomial\nfeaturesCol: f\n"))
	dec.KnownFields(true)
	if err := dec.Decode(e); err != nil {
		t.Fatal(err)
	}
	if e.RegParam != 0.5 || e.Family != "multinomial" || e.FeaturesCol != "f" || e.MaxIter != 100 || !e.FitIntercept {
		t.Fatalf("decoded %+v", e)
	}
	if err := json.Unmarshal([]byte(`{"maxIter": 7, "labelCol": "y"}`), e); err != nil {
		t.Fatal(err)
	}
	if e.MaxIter != 7 || e.LabelCol != "y" || e.RegParam != 0.5 {
		t.Fatalf("decoded %+v", e)
	}
	dec = yaml.NewDecoder(strings.NewReader("regParm: 1\n"))
	dec.KnownFields(true)
	if err := dec.Decode(NewLinearSVC()); err == nil {
		t.Fatal("a misspelt key was accepted")
	}
}
