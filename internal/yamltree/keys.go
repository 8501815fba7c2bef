package yamltree

import (
	"fmt"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// Hook checks a node whose Go type the walk cannot check by its shape
// alone (a type that decodes itself from several shapes, a shorthand);
// handled false leaves the node to CheckKeys. It sees the type as the
// field declares it (a pointer stays a pointer).
type Hook func(n *yaml.Node, t reflect.Type, path string) (err *Error, handled bool)

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// CheckKeys walks node n against Go type t and reports, with its line and
// dotted path, the first key that t has no field for (listing the keys it
// has), a mapping where t wants a list or a single value, and a float
// where t wants an integer (the YAML decoder would truncate it). Struct
// fields are keyed by their yaml tags (the lower-cased field name without
// one), `yaml:",inline"` structs flattened in place. hook, if not nil,
// runs first at every node.
func CheckKeys(n *yaml.Node, t reflect.Type, path string, hook Hook) *Error {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if hook != nil {
		if err, handled := hook(n, t, path); handled {
			return err
		}
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
			return &Error{Line: n.Line, Msg: fmt.Sprintf("%s: want a mapping of keys, got %s", Where(path), KindName(n))}
		}
		fields := map[string]reflect.StructField{}
		var names []string
		structFields(t, fields, &names)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			f, ok := fields[k.Value]
			if !ok {
				return &Error{Line: k.Line, Msg: fmt.Sprintf("unknown key %q in %s (known keys: %s)", k.Value, Where(path), strings.Join(names, ", "))}
			}
			if err := CheckKeys(v, f.Type, Join(path, k.Value), hook); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 || n.Tag == "!!null" {
			return nil
		}
		if n.Kind != yaml.SequenceNode {
			if reflect.PointerTo(t).Implements(unmarshalerType) {
				return nil
			}
			return &Error{Line: n.Line, Msg: fmt.Sprintf("%s: want a list, got %s", Where(path), KindName(n))}
		}
		for i, e := range n.Content {
			if err := CheckKeys(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i), hook); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind == yaml.MappingNode {
			for i := 1; i < len(n.Content); i += 2 {
				if err := CheckKeys(n.Content[i], t.Elem(), Join(path, n.Content[i-1].Value), hook); err != nil {
					return err
				}
			}
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		// The YAML decoder truncates a float into an integer field
		// (epochs: 5.7 would train 5 epochs).
		if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!float" {
			return &Error{Line: n.Line, Msg: fmt.Sprintf("%s: want an integer, got %s", Where(path), KindName(n))}
		}
	case reflect.Interface:
		// Anything decodes into an interface.
	default:
		// Scalars (and types that decode themselves): decoding reports
		// type errors with their line.
		if n.Kind == yaml.MappingNode && !reflect.PointerTo(t).Implements(unmarshalerType) {
			return &Error{Line: n.Line, Msg: fmt.Sprintf("%s: want a single value, got a mapping", Where(path))}
		}
	}
	return nil
}

// FieldName returns the YAML key of a struct field, or "" for fields that
// YAML skips.
func FieldName(f reflect.StructField) string {
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

// structFields collects the YAML keys of struct type t and their fields,
// in order, the fields of `yaml:",inline"` structs flattened in place.
func structFields(t reflect.Type, fields map[string]reflect.StructField, names *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		if _, opts, _ := strings.Cut(tag, ","); tag != "-" && hasOpt(opts, "inline") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				structFields(ft, fields, names)
				continue
			}
		}
		if name := FieldName(f); name != "" {
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

// Where names a dotted path in messages: "the config" for the root.
func Where(path string) string {
	if path == "" {
		return "the config"
	}
	return path
}

// Join appends key to a dotted path.
func Join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
