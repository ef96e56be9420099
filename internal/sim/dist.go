package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"

	"gopkg.in/yaml.v3"
)

// DistKind names a distribution.
type DistKind uint8

// Distribution kinds.
const (
	// DistConstant always returns Value.
	DistConstant DistKind = iota
	// DistExponential has mean Mean.
	DistExponential
	// DistUniform is uniform on [Min, Max].
	DistUniform
	// DistLognormal has mean Mean and shape Sigma (σ of the log).
	DistLognormal
	// DistGeometric is the number of trials to the first success on
	// {1, 2, …} with mean Mean (≥ 1).
	DistGeometric
)

var distNames = [...]string{"constant", "exponential", "uniform", "lognormal", "geometric"}

// String returns the YAML spelling.
func (k DistKind) String() string {
	if int(k) < len(distNames) {
		return distNames[k]
	}
	return "invalid"
}

// Dist is a random quantity of the workload. In YAML it is a number
// (constant) or a mapping {distribution, value, mean, sigma, min, max};
// min and max clamp the draws (for uniform they are the bounds).
type Dist struct {
	// Kind is the distribution.
	Kind DistKind
	// Value is the constant.
	Value float64
	// Mean is the mean (exponential, lognormal, geometric).
	Mean float64
	// Sigma is the lognormal shape.
	Sigma float64
	// Min and Max clamp draws when HasMin/HasMax (uniform: the bounds).
	Min, Max       float64
	HasMin, HasMax bool
}

type distYAML struct {
	Distribution string   `yaml:"distribution"`
	Value        *float64 `yaml:"value"`
	Mean         *float64 `yaml:"mean"`
	Sigma        *float64 `yaml:"sigma"`
	Min          *float64 `yaml:"min"`
	Max          *float64 `yaml:"max"`
}

func (x *Dist) decodeYAML(d *decoder, n *yaml.Node, path string) error {
	if n.Kind == yaml.ScalarNode {
		var f float64
		if (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&f) != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return d.errAt(n, path, "want a number or a distribution mapping, got %q", n.Value)
		}
		*x = Dist{Kind: DistConstant, Value: f}
		return nil
	}
	var y distYAML
	if err := d.decodeStruct(n, reflect.ValueOf(&y).Elem(), path); err != nil {
		return err
	}
	var out Dist
	found := false
	for i, name := range distNames {
		if name == y.Distribution {
			out.Kind, found = DistKind(i), true
		}
	}
	if !found {
		return d.errPath(path+".distribution", "want one of constant, exponential, uniform, lognormal, geometric; got %q", y.Distribution)
	}
	need := func(p *float64, field string) (float64, error) {
		if p == nil {
			return 0, d.errPath(path, "%s distribution needs %s", out.Kind, field)
		}
		return *p, nil
	}
	var err error
	switch out.Kind {
	case DistConstant:
		out.Value, err = need(y.Value, "value")
	case DistExponential, DistGeometric:
		out.Mean, err = need(y.Mean, "mean")
	case DistLognormal:
		if out.Mean, err = need(y.Mean, "mean"); err == nil {
			out.Sigma, err = need(y.Sigma, "sigma")
		}
	case DistUniform:
		if out.Min, err = need(y.Min, "min"); err == nil {
			out.Max, err = need(y.Max, "max")
		}
	}
	if err != nil {
		return err
	}
	if y.Min != nil {
		out.Min, out.HasMin = *y.Min, true
	}
	if y.Max != nil {
		out.Max, out.HasMax = *y.Max, true
	}
	*x = out
	return nil
}

// check validates parameters: every draw must be ≥ lo, and every parameter
// (value, mean, min, max) at most hi. Draws beyond hi (a long tail) are
// clamped where they are used.
func (x *Dist) check(d *decoder, path string, lo, hi float64) {
	bad := func(field, msg string) { d.report(path+field, "%s", msg) }
	tooBig := func(field string) { bad(field, fmt.Sprintf("must be at most %g", hi)) }
	switch x.Kind {
	case DistConstant:
		if x.Value < lo {
			bad("", fmt.Sprintf("must be ≥ %g", lo))
		}
		if x.Value > hi {
			tooBig("")
		}
	case DistExponential:
		if !(x.Mean > 0) {
			bad(".mean", "must be > 0")
		}
	case DistLognormal:
		if !(x.Mean > 0) {
			bad(".mean", "must be > 0")
		}
		if x.Sigma < 0 || x.Sigma > 10 {
			bad(".sigma", "must be 0–10")
		}
	case DistGeometric:
		if !(x.Mean >= 1) {
			bad(".mean", "must be ≥ 1")
		}
	case DistUniform:
		if x.Min > x.Max {
			bad(".min", "must be ≤ max")
		}
	}
	if x.Kind != DistConstant && x.Kind != DistUniform && x.Mean > hi {
		tooBig(".mean")
	}
	if (x.HasMin || x.Kind == DistUniform) && x.Min > hi {
		tooBig(".min")
	}
	if (x.HasMax || x.Kind == DistUniform) && x.Max > hi {
		tooBig(".max")
	}
	if x.HasMin && x.Min < lo {
		bad(".min", fmt.Sprintf("must be ≥ %g", lo))
	}
	if x.Kind == DistUniform && x.Min < lo {
		bad(".min", fmt.Sprintf("must be ≥ %g", lo))
	}
	if x.HasMin && x.HasMax && x.Min > x.Max {
		bad(".min", "must be ≤ max")
	}
	if x.Kind != DistUniform && x.HasMax && x.Max < lo {
		bad(".max", fmt.Sprintf("must be ≥ %g", lo))
	}
}

// Sample draws one value (in the quantity's unit) from r.
func (x *Dist) Sample(r *rand.Rand) float64 {
	s := x.sampler()
	return s.sample(r)
}

// distSampler is a Dist with the per-distribution constants computed once
// (the lognormal location, the geometric log1p): sample draws exactly what
// Dist.Sample draws, with the same arithmetic, without recomputing them.
type distSampler struct {
	*Dist
	mu      float64 // lognormal: ln(mean) − σ²/2
	logq    float64 // geometric: ln(1 − 1/mean)
	geomOne bool    // geometric with mean ≤ 1: always 1
}

func (x *Dist) sampler() distSampler {
	s := distSampler{Dist: x}
	switch x.Kind {
	case DistLognormal:
		s.mu = math.Log(x.Mean) - x.Sigma*x.Sigma/2
	case DistGeometric:
		if x.Mean <= 1 {
			s.geomOne = true
		} else {
			p := 1 / x.Mean
			s.logq = math.Log1p(-p)
		}
	}
	return s
}

func (s *distSampler) sample(r *rand.Rand) float64 {
	x := s.Dist
	var v float64
	switch x.Kind {
	case DistConstant:
		v = x.Value
	case DistExponential:
		v = r.ExpFloat64() * x.Mean
	case DistUniform:
		v = x.Min + r.Float64()*(x.Max-x.Min)
	case DistLognormal:
		v = math.Exp(s.mu + x.Sigma*r.NormFloat64())
	case DistGeometric:
		if s.geomOne {
			v = 1
		} else {
			u := 1 - r.Float64() // (0, 1]
			v = math.Ceil(math.Log(u) / s.logq)
			if v < 1 {
				v = 1
			}
		}
	}
	if x.HasMin && v < x.Min {
		v = x.Min
	}
	if x.HasMax && v > x.Max {
		v = x.Max
	}
	return v
}

// MeanValue is the distribution's mean before clamping (Value for
// constant, the midpoint for uniform).
func (x *Dist) MeanValue() float64 {
	switch x.Kind {
	case DistConstant:
		return x.Value
	case DistUniform:
		return (x.Min + x.Max) / 2
	}
	return x.Mean
}
