// Package jsonx writes JSON that never fails on a number: encoding/json refuses NaN and ±Inf
// ("json: unsupported value"), and a report whose run went non-finite, a Compare of one pair
// (an unbounded interval), a sweep of a checkpoint with a NaN weight would then lose its whole
// file after the work was done. MarshalIndent writes exactly what encoding/json writes, except
// that a non-finite float is null: the value is walked once by reflection into a tree that
// encoding/json then writes (field names, omitempty, embedded structs, map key order and the
// types' own MarshalJSON and MarshalText as encoding/json has them), so the usual case —
// every number finite — is encoding/json's own output, byte for byte.
//
// Invariant: the bytes differ from encoding/json's only where it would have failed. Mutation
// that would silently break it: sorting a struct's fields (a map for each struct) — every
// report's keys would move; TestSameAsEncodingJSON compares whole project reports.
package jsonx

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
)

// MarshalIndent is json.MarshalIndent with every NaN and ±Inf float written as null.
func MarshalIndent(v any, prefix, indent string) ([]byte, error) {
	return marshal(v, func(x any) ([]byte, error) { return json.MarshalIndent(x, prefix, indent) })
}

// Marshal is json.Marshal with every NaN and ±Inf float written as null.
func Marshal(v any) ([]byte, error) { return marshal(v, json.Marshal) }

// marshal is enc(v), or, where enc refused a non-finite number, enc of v's finite tree.
func marshal(v any, enc func(any) ([]byte, error)) ([]byte, error) {
	b, err := enc(v)
	var unsupported *json.UnsupportedValueError
	if err == nil || !errors.As(err, &unsupported) {
		return b, err
	}
	tree, err := finite(reflect.ValueOf(v))
	if err != nil {
		return nil, err
	}
	return enc(tree)
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// finite is v as a tree encoding/json writes as it writes v, with non-finite floats nil.
func finite(v reflect.Value) (any, error) {
	if !v.IsValid() {
		return nil, nil
	}
	if (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && v.IsNil() {
		return nil, nil
	}
	if v.Kind() != reflect.Float32 && v.Kind() != reflect.Float64 {
		if v.Type().Implements(marshalerType) || v.Type().Implements(textMarshalerType) ||
			(v.CanAddr() && (reflect.PointerTo(v.Type()).Implements(marshalerType) || reflect.PointerTo(v.Type()).Implements(textMarshalerType))) {
			b, err := json.Marshal(v.Interface())
			if err != nil {
				return nil, err
			}
			return json.RawMessage(b), nil
		}
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return finite(v.Elem())
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, nil
		}
		return v.Interface(), nil
	case reflect.Struct:
		return finiteStruct(v)
	case reflect.Map:
		if v.IsNil() {
			return nil, nil
		}
		out := make(map[string]any, v.Len())
		it := v.MapRange()
		for it.Next() {
			k, err := mapKey(it.Key())
			if err != nil {
				return nil, err
			}
			if out[k], err = finite(it.Value()); err != nil {
				return nil, err
			}
		}
		return out, nil
	case reflect.Slice:
		if v.IsNil() {
			return nil, nil
		}
		if v.Type().Elem().Kind() == reflect.Uint8 { // []byte: base64, as encoding/json
			return v.Interface(), nil
		}
		fallthrough
	case reflect.Array:
		out := make([]any, v.Len())
		for i := range out {
			var err error
			if out[i], err = finite(v.Index(i)); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return v.Interface(), nil
}

// mapKey is a map key as encoding/json writes it.
func mapKey(k reflect.Value) (string, error) {
	if k.Kind() == reflect.String {
		return k.String(), nil
	}
	if tm, ok := k.Interface().(encoding.TextMarshaler); ok {
		b, err := tm.MarshalText()
		return string(b), err
	}
	switch k.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return fmt.Sprint(k.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return fmt.Sprint(k.Uint()), nil
	}
	return "", fmt.Errorf("jsonx: map key of type %s", k.Type())
}

// object is a struct's fields in their order, written as a JSON object.
type object struct {
	keys []string
	vals []any
}

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(o.vals[i])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// finiteStruct is a struct's exported fields as encoding/json names and omits them, embedded
// structs without a name of their own inlined.
func finiteStruct(v reflect.Value) (any, error) {
	var o object
	if err := addFields(&o, v); err != nil {
		return nil, err
	}
	return o, nil
}

func addFields(o *object, v reflect.Value) error {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		fv := v.Field(i)
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				if fv.IsNil() {
					continue
				}
				fv, ft = fv.Elem(), ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if err := addFields(o, fv); err != nil {
					return err
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if strings.Contains(","+opts+",", ",omitempty,") && empty(fv) {
			continue
		}
		val, err := finite(fv)
		if err != nil {
			return err
		}
		if strings.Contains(","+opts+",", ",string,") && val != nil {
			b, err := json.Marshal(val)
			if err != nil {
				return err
			}
			val = string(b)
		}
		o.keys, o.vals = append(o.keys, name), append(o.vals, val)
	}
	return nil
}

// empty is encoding/json's omitempty test.
func empty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return v.IsZero()
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}

// Encode writes v to w as json.Encoder does (indented by indent, "" for none, and a newline),
// with every NaN and ±Inf float written as null.
func Encode(w io.Writer, v any, indent string) error {
	var b []byte
	var err error
	if indent == "" {
		b, err = Marshal(v)
	} else {
		b, err = MarshalIndent(v, "", indent)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
