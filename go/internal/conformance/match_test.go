// SPDX-License-Identifier: MIT

// The matching language of tests/conformance/README.md: an expectation is
// a shape, "$x" binds or compares a variable, {"gt": x} and {"range":
// [lo, hi]} compare integers, and the key "name" holds a symbolic name.

package conformance

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// norm turns decoded JSON (with UseNumber) and step results into one set
// of types: nil, bool, string, int64, map[string]any, []any.
func norm(v any) any {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		if err != nil {
			return x.String()
		}
		return n
	case int:
		return int64(x)
	case uint64:
		return int64(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = norm(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = norm(e)
		}
		return out
	}
	return v
}

type missing struct{}

func (r *runner) match(exp, act any, path string) error {
	if s, ok := exp.(string); ok && strings.HasPrefix(s, "$") {
		bound, ok := r.vars[s[1:]]
		if !ok {
			if act == nil || act == (missing{}) {
				return fmt.Errorf("%s: nothing to bind %s", path, s)
			}
			r.vars[s[1:]] = act
			return nil
		}
		exp = bound
	}
	if m, ok := exp.(map[string]any); ok {
		if len(m) == 1 && m["gt"] != nil {
			return r.matchGt(m["gt"], act, path)
		}
		if len(m) == 1 && m["range"] != nil {
			return matchRange(m["range"], act, path)
		}
		return r.matchObject(m, act, path)
	}
	if !reflect.DeepEqual(exp, act) {
		return fmt.Errorf("%s: expected %#v, got %#v", path, exp, act)
	}
	return nil
}

func (r *runner) matchGt(lo, act any, path string) error {
	if s, ok := lo.(string); ok && strings.HasPrefix(s, "$") {
		lo = r.vars[s[1:]]
	}
	a, ok1 := act.(int64)
	l, ok2 := lo.(int64)
	if !ok1 || !ok2 || a <= l {
		return fmt.Errorf("%s: expected > %v, got %#v", path, lo, act)
	}
	return nil
}

func matchRange(rng, act any, path string) error {
	b, ok := rng.([]any)
	a, isInt := act.(int64)
	if !ok || len(b) != 2 || !isInt || a < b[0].(int64) || a > b[1].(int64) {
		return fmt.Errorf("%s: expected in %v, got %#v", path, rng, act)
	}
	return nil
}

func (r *runner) matchObject(m map[string]any, act any, path string) error {
	o, ok := act.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: expected an object, got %#v", path, act)
	}
	for k, v := range m {
		a, present := o[k]
		if !present && v != nil {
			return fmt.Errorf("%s.%s: missing in %#v", path, k, act)
		}
		if s, isStr := v.(string); k == "name" && isStr {
			if a != r.real(s) {
				return fmt.Errorf("%s.%s: expected %s, got %#v", path, k, r.real(s), a)
			}
			continue
		}
		if err := r.match(v, a, path+"."+k); err != nil {
			return err
		}
	}
	return nil
}
