package config

import (
	"fmt"
	"io"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

// applyRenames moves each renamed key found in the file to its new name,
// writing one deprecation line for each. Both names given is an error.
func applyRenames(root *yaml.Node, name string, renames []Rename, warn io.Writer) error {
	for _, r := range renames {
		oldParts := strings.Split(r.Old, ".")
		parent := lookup(root, oldParts[:len(oldParts)-1])
		if parent == nil || parent.Kind != yaml.MappingNode {
			continue
		}
		last := oldParts[len(oldParts)-1]
		i := keyIndex(parent, last)
		if i < 0 || (r.When != nil && !r.When(parent.Content[i+1])) {
			continue
		}
		k, v := parent.Content[i], parent.Content[i+1]
		newParts := strings.Split(r.New, ".")
		newParent := lookup(root, newParts[:len(newParts)-1])
		newLast := newParts[len(newParts)-1]
		if newParent == nil || newParent.Kind != yaml.MappingNode {
			continue // the renamed keys stay beside each other
		}
		if keyIndex(newParent, newLast) >= 0 {
			return &Error{File: name, Line: k.Line, Key: r.Old, Msg: fmt.Sprintf("the old name of %s, given together with it; keep %s", r.New, r.New)}
		}
		deprecated(warn, fmt.Sprintf("%s:%d", name, k.Line), r.Old, r.New)
		parent.Content = append(parent.Content[:i], parent.Content[i+2:]...)
		newParent.Content = append(newParent.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: newLast, Line: k.Line, Column: k.Column}, v)
	}
	return nil
}

// renameOverride rewrites an override of a renamed key ("data.path=x")
// to the new key, with a deprecation line. A When-conditioned rename
// applies when the value reads as the renamed idea.
func renameOverride(o string, renames []Rename, warn io.Writer) string {
	key, val, ok := strings.Cut(o, "=")
	if !ok {
		return o
	}
	for _, r := range renames {
		if key != r.Old {
			continue
		}
		if r.When != nil {
			var doc yaml.Node
			if yaml.Unmarshal([]byte(val), &doc) != nil || len(doc.Content) != 1 || !r.When(doc.Content[0]) {
				continue
			}
		}
		deprecated(warn, "--set "+o, r.Old, r.New)
		return r.New + "=" + val
	}
	return o
}

// lookup returns the node at the key path in root, nil if absent.
func lookup(root *yaml.Node, path []string) *yaml.Node {
	n := root
	for _, p := range path {
		if n.Kind == yaml.AliasNode {
			n = n.Alias
		}
		if n.Kind != yaml.MappingNode {
			return nil
		}
		i := keyIndex(n, p)
		if i < 0 {
			return nil
		}
		n = n.Content[i+1]
	}
	if n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// keyIndex returns the index of key in mapping n's content, or -1.
func keyIndex(n *yaml.Node, key string) int {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return i
		}
	}
	return -1
}

// Deprecated writes the one deprecation line of an old form the front end
// still accepts (where: "file:line" or "--set k=v") to s.Warn, or
// os.Stderr.
func (s Spec) Deprecated(where, old, new string) {
	w := s.Warn
	if w == nil {
		w = os.Stderr
	}
	deprecated(w, where, old, new)
}

func deprecated(w io.Writer, where, old, new string) {
	fmt.Fprintf(w, "%s: %s is deprecated: use %s (the old form goes in the next release)\n", where, old, new)
}
