package mljob

// The strict YAML checks of the config: the same rules as train/job's
// config (every key known, with its line; integers not given as floats;
// bounded aliases; --set key=value overrides on the YAML tree), kept here
// because ml/mljob sits on the same floor as train/job and cannot import
// it.

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/fathom-ml/fathom/internal/yamltree"
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
			return &ConfigError{Line: n.Line, Msg: fmt.Sprintf("%s: want a mapping of keys, got %s", where(path), yamltree.KindName(n))}
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
			return &ConfigError{Line: n.Line, Msg: fmt.Sprintf("%s: want a list, got %s", where(path), yamltree.KindName(n))}
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
			return &ConfigError{Line: n.Line, Msg: fmt.Sprintf("%s: want an integer, got %s", where(path), yamltree.KindName(n))}
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

// checkAliases bounds the config's alias-expanded size
// (yamltree.CheckAliases), naming the line that crosses it.
func checkAliases(root *yaml.Node) *ConfigError {
	if e := yamltree.CheckAliases(root, maxExpandedNodes); e != nil {
		return &ConfigError{Line: e.Line, Msg: e.Msg}
	}
	return nil
}
