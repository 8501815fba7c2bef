package mljob

// The strict YAML checks of the config: the same rules as train/job's
// config (every key known, with its line; integers not given as floats;
// bounded aliases; --set key=value overrides on the YAML tree), kept here
// because ml/mljob sits on the same floor as train/job and cannot import
// it.

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// ConfigError is an error in a config, located by file and line when
// known.
type ConfigError struct {
	File string
	Line int // 0 when unknown (a value given with --set)
	Msg  string
}

// Error is "file:line: message" (parts left out when unknown).
func (e *ConfigError) Error() string {
	switch {
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	case e.File != "":
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// yamlName returns the YAML key of a struct field, or "" for fields that
// YAML skips.
func yamlName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	tag := f.Tag.Get("yaml")
	if tag == "-" {
		return ""
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		name = strings.ToLower(f.Name)
	}
	return name
}

// yamlFields collects the YAML keys of struct type t and their fields, in
// order, the fields of `yaml:",inline"` structs flattened in place (a
// stage whose shared parameters are an embedded struct).
func yamlFields(t reflect.Type, fields map[string]reflect.StructField, names *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		if _, opts, _ := strings.Cut(f.Tag.Get("yaml"), ","); f.Tag.Get("yaml") != "-" && hasOpt(opts, "inline") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				yamlFields(ft, fields, names)
				continue
			}
		}
		if name := yamlName(f); name != "" {
			if _, dup := fields[name]; !dup {
				*names = append(*names, name)
			}
			fields[name] = f
		}
	}
}

func hasOpt(opts, opt string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == opt {
			return true
		}
	}
	return false
}

// maxExpandedNodes bounds the size of a YAML tree with every alias
// expanded (a "billion laughs" would otherwise run for hours).
const maxExpandedNodes = 100_000

// checkAliases reports a tree whose alias-expanded size exceeds
// maxExpandedNodes, in time linear in the text.
func checkAliases(root *yaml.Node) *ConfigError {
	sizes := map[*yaml.Node]int{}
	var size func(n *yaml.Node) (int, *ConfigError)
	size = func(n *yaml.Node) (int, *ConfigError) {
		if s, ok := sizes[n]; ok {
			if s < 0 {
				return 0, &ConfigError{Line: n.Line, Msg: "an alias refers to a value that contains it"}
			}
			return s, nil
		}
		sizes[n] = -1
		total := 1
		kids := n.Content
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			kids = []*yaml.Node{n.Alias}
		}
		for _, c := range kids {
			s, err := size(c)
			if err != nil {
				return 0, err
			}
			total += s
			if total > maxExpandedNodes {
				return 0, &ConfigError{Line: max(c.Line, n.Line), Msg: fmt.Sprintf("too many aliases: the config expands past %d values", maxExpandedNodes)}
			}
		}
		sizes[n] = total
		return total, nil
	}
	_, err := size(root)
	return err
}

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// keyChecker lets a type check its own keys (a type that decodes itself
// from several shapes).
type keyChecker interface {
	checkKeys(n *yaml.Node, path string) *ConfigError
}

var keyCheckerType = reflect.TypeFor[keyChecker]()

// checkKeys walks node against Go type t and reports the first key that
// t has no field for, with its line and dotted path.
func checkKeys(n *yaml.Node, t reflect.Type, path string) *ConfigError {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if reflect.PointerTo(t).Implements(keyCheckerType) {
		return reflect.New(t).Interface().(keyChecker).checkKeys(n, path)
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Tag == "!!null" {
			return nil
		}
		if n.Kind != yaml.MappingNode {
			return &ConfigError{Line: n.Line, Msg: fmt.Sprintf("%s: want a mapping of keys, got %s", where(path), kindName(n))}
		}
		fields := map[string]reflect.StructField{}
		var names []string
		yamlFields(t, fields, &names)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			f, ok := fields[k.Value]
			if !ok {
				return &ConfigError{Line: k.Line, Msg: fmt.Sprintf("unknown key %q in %s (known keys: %s)", k.Value, where(path), strings.Join(names, ", "))}
			}
			if err := checkKeys(v, f.Type, join(path, k.Value)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if n.Tag == "!!null" {
			return nil
		}
		if n.Kind != yaml.SequenceNode {
			if reflect.PointerTo(t).Implements(unmarshalerType) {
				return nil
			}
			return &ConfigError{Line: n.Line, Msg: fmt.Sprintf("%s: want a list, got %s", where(path), kindName(n))}
		}
		for i, e := range n.Content {
			if err := checkKeys(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind == yaml.MappingNode {
			for i := 1; i < len(n.Content); i += 2 {
				if err := checkKeys(n.Content[i], t.Elem(), join(path, n.Content[i-1].Value)); err != nil {
					return err
				}
			}
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		// The YAML decoder would truncate a float into an integer field.
		if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!float" {
			return &ConfigError{Line: n.Line, Msg: fmt.Sprintf("%s: want an integer, got %s", where(path), kindName(n))}
		}
	case reflect.Interface:
	default:
		if n.Kind == yaml.MappingNode && !reflect.PointerTo(t).Implements(unmarshalerType) {
			return &ConfigError{Line: n.Line, Msg: fmt.Sprintf("%s: want a single value, got a mapping", where(path))}
		}
	}
	return nil
}

// decodeStrict checks node's keys against target (a pointer) and decodes
// it there, over the values target already holds. Errors carry a line.
func decodeStrict(n *yaml.Node, target any, path string) *ConfigError {
	t := reflect.TypeOf(target)
	if t == nil || t.Kind() != reflect.Pointer {
		return &ConfigError{Line: n.Line, Msg: fmt.Sprintf("%s: %T cannot take parameters", where(path), target)}
	}
	if err := checkKeys(n, t.Elem(), path); err != nil {
		return err
	}
	if err := n.Decode(target); err != nil {
		return yamlError(n, path, err)
	}
	return nil
}

// yamlError turns a decoding error into a ConfigError; yaml.v3's type
// errors already name their line ("line 7: cannot unmarshal ...").
func yamlError(n *yaml.Node, path string, err error) *ConfigError {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n  ")
	line := n.Line
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, tail, ok := strings.Cut(rest, ": "); ok {
			if l, err := strconv.Atoi(num); err == nil {
				line, msg = l, tail
			}
		}
	}
	return &ConfigError{Line: line, Msg: fmt.Sprintf("%s: %s", where(path), msg)}
}

func where(path string) string {
	if path == "" {
		return "the config"
	}
	return path
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func kindName(n *yaml.Node) string {
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

// applyOverride sets key path a.b.c (list items by index:
// pipeline.2.params.regParam) in the YAML tree to a value parsed as YAML,
// creating mappings as needed.
func applyOverride(root *yaml.Node, o string) error {
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
	clearLines(value)
	parts := strings.Split(key, ".")
	n := root
	for i, p := range parts {
		last := i == len(parts)-1
		switch {
		case n.Kind == yaml.MappingNode:
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
		case n.Kind == yaml.SequenceNode:
			idx, err := strconv.Atoi(p)
			if err != nil || idx < 0 || idx >= len(n.Content) {
				return fmt.Errorf("%q: %s is a list of %d items; use an index 0..%d", p, strings.Join(parts[:i], "."), len(n.Content), len(n.Content)-1)
			}
			if last {
				n.Content[idx] = value
			}
			n = n.Content[idx]
		case n.Kind == yaml.ScalarNode && n.Tag == "!!null":
			n.Kind, n.Tag, n.Value = yaml.MappingNode, "!!map", ""
			child := value
			if !last {
				child = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: p}, child)
			n = child
		default:
			return fmt.Errorf("%s is a single value, it has no key %q", strings.Join(parts[:i], "."), p)
		}
	}
	return nil
}

func clearLines(n *yaml.Node) {
	n.Line, n.Column = 0, 0
	for _, c := range n.Content {
		clearLines(c)
	}
}
