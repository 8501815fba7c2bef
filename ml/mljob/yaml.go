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

// decodeStrict checks node's keys against target (a pointer) and decodes
// it there, over the values target already holds. Errors carry a line.
func decodeStrict(n *yaml.Node, target any, path string) *ConfigError {
	t := reflect.TypeOf(target)
	if t == nil || t.Kind() != reflect.Pointer {
		return &ConfigError{Line: n.Line, Msg: fmt.Sprintf("%s: %T cannot take parameters", yamltree.Where(path), target)}
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
	return &ConfigError{Line: line, Msg: fmt.Sprintf("%s: %s", yamltree.Where(path), msg)}
}

// checkAliases bounds the config's alias-expanded size
// (yamltree.CheckAliases), naming the line that crosses it.
func checkAliases(root *yaml.Node) *ConfigError {
	if e := yamltree.CheckAliases(root, maxExpandedNodes); e != nil {
		return &ConfigError{Line: e.Line, Msg: e.Msg}
	}
	return nil
}

// checkKeys walks node against Go type t (yamltree.CheckKeys) and reports
// the first key that t has no field for, with its line and dotted path;
// a keyChecker checks its own keys.
func checkKeys(n *yaml.Node, t reflect.Type, path string) *ConfigError {
	e := yamltree.CheckKeys(n, t, path, func(n *yaml.Node, t reflect.Type, path string) (*yamltree.Error, bool) {
		if !reflect.PointerTo(t).Implements(keyCheckerType) {
			return nil, false
		}
		if err := reflect.New(t).Interface().(keyChecker).checkKeys(n, path); err != nil {
			return &yamltree.Error{Line: err.Line, Msg: err.Msg}, true
		}
		return nil, true
	})
	if e == nil {
		return nil
	}
	return &ConfigError{Line: e.Line, Msg: e.Msg}
}
