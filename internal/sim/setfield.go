package sim

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/lcctl/lcctl/internal/suggest"
)

// SetField sets one numeric scenario field, named by its YAML path, to v
// (the CLI's --sweep). Paths use the scenario file's field names:
// `workload.session_rate`, `router.staleness_ms`, `clusters[2].prefill_tps`,
// or `clusters.kv_cache_tokens` for every cluster; a distribution's
// parameters are `workload.think_time_s.mean` (`value`, `mean`, `sigma`,
// `min`, `max`; `value` makes it a constant). Integer fields take whole
// numbers only. The scenario must be checked afterwards (LoadScenarioWith
// does). Errors name the path and what is wrong.
func (sc *Scenario) SetField(path string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%s: want a finite number, got %v", path, v)
	}
	parts := strings.Split(path, ".")
	return setPath(reflect.ValueOf(sc).Elem(), parts, path, v)
}

func setPath(cur reflect.Value, parts []string, path string, v float64) error {
	if len(parts) == 0 {
		return setNumber(cur, path, v)
	}
	name, idx := parts[0], -1
	if i := strings.IndexByte(name, '['); i >= 0 && strings.HasSuffix(name, "]") {
		n, err := strconv.Atoi(name[i+1 : len(name)-1])
		if err != nil || n < 0 {
			return fmt.Errorf("%s: bad index in %q", path, name)
		}
		name, idx = name[:i], n
	}
	if cur.Kind() == reflect.Pointer {
		if cur.IsNil() {
			cur.Set(reflect.New(cur.Type().Elem()))
		}
		cur = cur.Elem()
	}
	if cur.Type() == reflect.TypeFor[Dist]() {
		if len(parts) != 1 || idx >= 0 {
			return fmt.Errorf("%s: a distribution has value, mean, sigma, min and max", path)
		}
		d := cur.Addr().Interface().(*Dist)
		switch name {
		case "value":
			*d = Dist{Kind: DistConstant, Value: v}
		case "mean":
			d.Mean = v
		case "sigma":
			d.Sigma = v
		case "min":
			d.Min, d.HasMin = v, true
		case "max":
			d.Max, d.HasMax = v, true
		default:
			return fmt.Errorf("%s: a distribution has value, mean, sigma, min and max, not %q", path, name)
		}
		return nil
	}
	if cur.Kind() != reflect.Struct {
		return fmt.Errorf("%s: %q is not a mapping", path, name)
	}
	idxs, names := fieldIndex(cur.Type())
	fi, ok := idxs[name]
	if !ok {
		return fmt.Errorf("%s: unknown field %q%s (known: %s)", path, name, suggest.DidYouMean(name, names), strings.Join(names, ", "))
	}
	f := cur.Field(fi)
	if f.Kind() == reflect.Slice {
		if f.Len() == 0 {
			return fmt.Errorf("%s: %s is empty in this scenario", path, name)
		}
		if idx >= f.Len() {
			return fmt.Errorf("%s: %s has %d entries", path, name, f.Len())
		}
		for i := 0; i < f.Len(); i++ {
			if idx < 0 || i == idx {
				if err := setPath(f.Index(i), parts[1:], path, v); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if idx >= 0 {
		return fmt.Errorf("%s: %s is not a list", path, name)
	}
	if f.Type() == reflect.TypeFor[Dist]() && len(parts) == 1 {
		return fmt.Errorf("%s: a distribution: sweep one of its parameters (%s.mean, %s.value, …)", path, path, path)
	}
	return setPath(f, parts[1:], path, v)
}

func setNumber(f reflect.Value, path string, v float64) error {
	if f.Kind() == reflect.Pointer {
		if f.IsNil() {
			f.Set(reflect.New(f.Type().Elem()))
		}
		f = f.Elem()
	}
	whole := v == math.Trunc(v)
	switch f.Kind() {
	case reflect.Float64, reflect.Float32:
		f.SetFloat(v)
	case reflect.Int, reflect.Int64, reflect.Int32:
		if !whole || math.Abs(v) > 1<<62 || f.OverflowInt(int64(v)) {
			return fmt.Errorf("%s: want a whole number, got %v", path, v)
		}
		f.SetInt(int64(v))
	case reflect.Uint64, reflect.Uint32:
		if !whole || v < 0 || v > 1<<62 || f.OverflowUint(uint64(v)) {
			return fmt.Errorf("%s: want a whole number ≥ 0, got %v", path, v)
		}
		f.SetUint(uint64(v))
	default:
		return fmt.Errorf("%s: not a numeric field", path)
	}
	return nil
}
