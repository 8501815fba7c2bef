package mljob

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/fathom-ml/fathom/internal/yamltree"
	"github.com/fathom-ml/fathom/ml"
)

// DecodeParams decodes a YAML (or JSON) mapping of parameters over
// target (a pointer to a stage's or evaluator's struct, its defaults
// set), strictly: an unknown key or a value of the wrong type is an error
// naming it and its line.
func DecodeParams(target any, text string) error {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return fmt.Errorf("params: %w", err)
	}
	if doc.Kind == 0 {
		return nil
	}
	n := doc.Content[0]
	if n.Kind != yaml.MappingNode {
		if n.Tag == "!!null" {
			return nil
		}
		return fmt.Errorf("params: want a mapping, got %s", yamltree.KindName(n))
	}
	if err := checkAliases(n); err != nil {
		return err
	}
	if err := decodeStrict(n, target, "params"); err != nil {
		return err
	}
	return nil
}

// SetParams applies "key=value" settings (values parsed as YAML) to
// target as DecodeParams does.
func SetParams(target any, kv []string) error {
	if len(kv) == 0 {
		return nil
	}
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, s := range kv {
		if err := yamltree.ApplyOverride(m, s); err != nil {
			return fmt.Errorf("param %q: %v", s, err)
		}
	}
	if err := decodeStrict(m, target, "params"); err != nil {
		return err
	}
	return nil
}

// NewStage returns a registered stage with params (a YAML or JSON
// mapping, "" for the defaults) decoded over its defaults.
func NewStage(typ, params string) (ml.Stage, error) {
	st, err := ml.NewStage(typ)
	if err != nil {
		return nil, err
	}
	if err := DecodeParams(st, params); err != nil {
		return nil, fmt.Errorf("%s: %w", typ, err)
	}
	return st, nil
}
