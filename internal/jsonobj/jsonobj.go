// Package jsonobj decodes the JSON files the inspector reads (config.json,
// preprocessor_config.json, a shard index), each of which must hold one object.
//
// Invariant: a file that is not one JSON object is refused with what it holds instead, named
// by its path. Mutation that would silently break it: decoding `null` into the target (Go's
// json does so without an error): every field would then take its default, and a broken
// config would run as the class defaults.
package jsonobj

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Unmarshal decodes data (the file at path) into v, saying what the file holds instead of an
// object: a byte-order mark (JSON has none, and transformers refuses the file too), null, an
// array, a number, nothing.
func Unmarshal(data []byte, path string, v any) error {
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		return fmt.Errorf("%s: starts with a UTF-8 byte-order mark, which JSON does not allow (transformers refuses the file too): save it without one", path)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return fmt.Errorf("%s: empty, want a JSON object", path)
	}
	if trimmed[0] != '{' {
		what := map[byte]string{'n': "null", '[': "an array", '"': "a string", 't': "true", 'f': "false"}[trimmed[0]]
		if what == "" {
			what = fmt.Sprintf("%.20q", trimmed)
		}
		return fmt.Errorf("%s: holds %s, want a JSON object", path, what)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: invalid JSON: %v", path, err)
	}
	return nil
}
