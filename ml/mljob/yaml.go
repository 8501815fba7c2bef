package mljob

// The strict YAML checks of parameters and of the types that check their
// own keys; the config itself is read by internal/config, the layer
// train/job's configs share.

import (
	"fmt"
	"reflect"

	"github.com/fathom-ml/fathom/internal/config"
	"github.com/fathom-ml/fathom/internal/yamltree"
	"gopkg.in/yaml.v3"
)

// ConfigError is an error in a config, located by file, line and key
// when known: the config layer's one error type (internal/config).
type ConfigError = config.Error

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

// yamlError turns a decoding error into a ConfigError with its line.
func yamlError(n *yaml.Node, path string, err error) *ConfigError {
	e := config.DecodeError(n, "", "", err)
	e.Msg = fmt.Sprintf("%s: %s", yamltree.Where(path), e.Msg)
	return e
}

// checkAliases bounds the config's alias-expanded size
// (yamltree.CheckAliases), naming the line that crosses it.
func checkAliases(root *yaml.Node) *ConfigError {
	if e := yamltree.CheckAliases(root, config.MaxExpandedNodes); e != nil {
		return &ConfigError{Line: e.Line, Msg: e.Msg}
	}
	return nil
}

// checkKeys walks node against Go type t (yamltree.CheckKeys) and reports
// the first key that t has no field for, with its line and dotted path;
// a keyChecker checks its own keys.
func checkKeys(n *yaml.Node, t reflect.Type, path string) *ConfigError {
	e := yamltree.CheckKeys(n, t, path, keyHook)
	if e == nil {
		return nil
	}
	return &ConfigError{Line: e.Line, Msg: e.Msg}
}

// keyHook lets a keyChecker check its own keys.
func keyHook(n *yaml.Node, t reflect.Type, path string) (*yamltree.Error, bool) {
	if !reflect.PointerTo(t).Implements(keyCheckerType) {
		return nil, false
	}
	if err := reflect.New(t).Interface().(keyChecker).checkKeys(n, path); err != nil {
		return &yamltree.Error{Line: err.Line, Msg: err.Msg}, true
	}
	return nil, true
}
