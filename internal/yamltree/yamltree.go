// Package yamltree holds the YAML-tree helpers of the config layer
// (internal/config, which train/job's and ml/mljob's configs share):
// the bound on alias expansion, --set overrides on the tree, the key
// check against Go types, and node names for messages.
package yamltree

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Error is a problem at a line of the YAML text (0: no line, e.g. from an
// override); the config readers wrap it in their own error type.
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// CheckAliases reports a tree whose alias-expanded size exceeds
// maxExpanded, naming the line of the alias that crosses the bound.
// It visits each node once (sizes are memoized by node), so it takes time
// linear in the text whatever the aliases expand to.
func CheckAliases(root *yaml.Node, maxExpanded int) *Error {
	sizes := map[*yaml.Node]int{}
	var size func(n *yaml.Node) (int, *Error)
	size = func(n *yaml.Node) (int, *Error) {
		if s, ok := sizes[n]; ok {
			if s < 0 {
				return 0, &Error{Line: n.Line, Msg: "an alias refers to a value that contains it"}
			}
			return s, nil
		}
		sizes[n] = -1 // in progress
		total := 1
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			s, err := size(n.Alias)
			if err != nil {
				return 0, err
			}
			total += s
			if total > maxExpanded {
				return 0, &Error{Line: n.Line, Msg: fmt.Sprintf("too many aliases: the alias *%s expands the config past %d values", n.Value, maxExpanded)}
			}
		}
		for _, c := range n.Content {
			s, err := size(c)
			if err != nil {
				return 0, err
			}
			total += s
			if total > maxExpanded {
				line, what := c.Line, "the aliases in this value expand"
				if line == 0 {
					line = n.Line
				}
				if c.Kind == yaml.AliasNode {
					what = fmt.Sprintf("the alias *%s expands", c.Value)
				}
				return 0, &Error{Line: line, Msg: fmt.Sprintf("too many aliases: %s the config past %d values", what, maxExpanded)}
			}
		}
		sizes[n] = total
		return total, nil
	}
	_, err := size(root)
	return err
}

func KindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		return fmt.Sprintf("the value %q", n.Value)
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	return "nothing"
}

// ApplyOverride sets key path a.b.c (list items by index: model.0.out) in
// the YAML tree to a value parsed as YAML, creating mappings as needed.
func ApplyOverride(root *yaml.Node, o string) error {
	key, val, ok := strings.Cut(o, "=")
	if !ok || key == "" {
		return errors.New("want key=value")
	}
	var vdoc yaml.Node
	if err := yaml.Unmarshal([]byte(val), &vdoc); err != nil {
		return fmt.Errorf("value: %v", err)
	}
	value := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: ""}
	if vdoc.Kind == yaml.DocumentNode && len(vdoc.Content) == 1 {
		value = vdoc.Content[0]
	}
	ClearLines(value)
	parts := strings.Split(key, ".")
	n := root
	for i, p := range parts {
		last := i == len(parts)-1
		switch n.Kind {
		case yaml.MappingNode:
			var child *yaml.Node
			for j := 0; j+1 < len(n.Content); j += 2 {
				if n.Content[j].Value == p {
					child = n.Content[j+1]
					if last {
						n.Content[j+1] = value
					}
					break
				}
			}
			if child == nil {
				child = value
				if !last {
					child = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
				}
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: p}, child)
			}
			n = child
		case yaml.SequenceNode:
			idx, err := strconv.Atoi(p)
			if err != nil || idx < 0 || idx >= len(n.Content) {
				return fmt.Errorf("%q: %s is a list of %d items; use an index 0..%d", p, strings.Join(parts[:i], "."), len(n.Content), len(n.Content)-1)
			}
			if last {
				n.Content[idx] = value
			}
			n = n.Content[idx]
		default:
			if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
				n.Kind, n.Tag, n.Value = yaml.MappingNode, "!!map", ""
				child := value
				if !last {
					child = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
				}
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: p}, child)
				n = child
				continue
			}
			return fmt.Errorf("%s is a single value, it has no key %q", strings.Join(parts[:i], "."), p)
		}
	}
	return nil
}

func ClearLines(n *yaml.Node) {
	n.Line, n.Column = 0, 0
	for _, c := range n.Content {
		ClearLines(c)
	}
}
