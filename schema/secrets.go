package schema

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// SecretFormat is the JSON Schema format that marks a string as a secret, as
// OpenMetadata marks its connection passwords.
const SecretFormat = "password"

// maxSecretDepth bounds how deeply secretPaths follows a schema.
const maxSecretDepth = 32

// Secrets returns the paths of a kind's secret values, as its schema declares them: each
// string schema with "format": "password", reached through properties,
// additionalProperties ("*"), items ("*"), allOf, anyOf, oneOf and $ref. A path is
// property names joined by "/", from the document root; "*" stands for any member of an
// object or any item of an array. The first name of a path is a secret-bearing field.
// An unknown kind has none.
func (v *Validator) Secrets(kind string) []string {
	return append([]string(nil), v.secrets[kind]...)
}

// secretPaths derives the secret paths of every kind from the raw schemas.
func secretPaths(raw map[string]json.RawMessage) (map[string][]string, error) {
	docs := map[string]map[string]any{}
	for name, b := range raw {
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		docs[name] = doc
	}
	out := map[string][]string{}
	for name, doc := range docs {
		if name == commonName {
			continue
		}
		w := secretWalker{docs: docs, seen: map[string]bool{}}
		if err := w.walk(name, doc, nil, 0); err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		paths := make([]string, 0, len(w.paths))
		for p := range w.paths {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		if len(paths) > 0 {
			out[name] = paths
		}
	}
	return out, nil
}

type secretWalker struct {
	docs  map[string]map[string]any
	seen  map[string]bool // reference and path, against cycles
	paths map[string]bool
}

func (w *secretWalker) walk(file string, node map[string]any, path []string, depth int) error {
	if depth > maxSecretDepth {
		return nil
	}
	if ref, ok := node["$ref"].(string); ok {
		target, targetFile, err := w.resolve(file, ref)
		if err != nil {
			return err
		}
		key := targetFile + "#" + ref + "@" + strings.Join(path, "/")
		if !w.seen[key] {
			w.seen[key] = true
			if err := w.walk(targetFile, target, path, depth+1); err != nil {
				return err
			}
		}
	}
	if f, _ := node["format"].(string); f == SecretFormat && len(path) > 0 {
		if w.paths == nil {
			w.paths = map[string]bool{}
		}
		w.paths[strings.Join(path, "/")] = true
	}
	if props, ok := node["properties"].(map[string]any); ok {
		for name, p := range props {
			if m, ok := p.(map[string]any); ok {
				if err := w.walk(file, m, append(path[:len(path):len(path)], name), depth+1); err != nil {
					return err
				}
			}
		}
	}
	for _, key := range []string{"additionalProperties", "items"} {
		if m, ok := node[key].(map[string]any); ok {
			if err := w.walk(file, m, append(path[:len(path):len(path)], "*"), depth+1); err != nil {
				return err
			}
		}
	}
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		list, _ := node[key].([]any)
		for _, x := range list {
			if m, ok := x.(map[string]any); ok {
				if err := w.walk(file, m, path, depth+1); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// resolve finds the schema a $ref names: "#/$defs/X" in the same file, or
// "common.json#/$defs/X".
func (w *secretWalker) resolve(file, ref string) (map[string]any, string, error) {
	target := file
	doc, pointer, ok := strings.Cut(ref, "#")
	if !ok {
		return nil, "", fmt.Errorf("$ref %s: no fragment", ref)
	}
	if doc != "" {
		target = strings.TrimSuffix(doc, ".json")
	}
	var cur any = w.docs[target]
	for _, tok := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		if tok == "" {
			continue
		}
		m, _ := cur.(map[string]any)
		cur = m[tok]
	}
	m, ok := cur.(map[string]any)
	if !ok {
		return nil, "", fmt.Errorf("$ref %s: not found", ref)
	}
	return m, target, nil
}
