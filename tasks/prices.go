package tasks

import (
	"math"
	"strconv"
	"strings"
)

// Price is one entry of defaults.prices: what a model costs, in US dollars
// per million tokens. CachedInput 0 means Input (no discount known).
//
//	"prices": {"gpt-4o": {"input": 2.5, "cached_input": 1.25, "output": 10}}
type Price struct {
	Input, CachedInput, Output float64
}

// priceKeys are the members of a price object.
var priceKeys = []string{"input", "cached_input", "output"}

// prices decodes the "prices" object of a defaults object: model names to
// price objects. It returns nil when absent.
func (d *decoder) prices(obj *node) map[string]Price {
	v := obj.get("prices")
	if v == nil || v.kind == kindNull {
		return nil
	}
	if v.kind != kindObject {
		d.add(v.off, "", `"prices" is %s; want an object mapping model names to {"input": 2.5, "cached_input": 1.25, "output": 10} (dollars per million tokens)`, describe(v))
		return nil
	}
	d.uniqueKeys(v, "")
	out := make(map[string]Price, len(v.members))
	for _, m := range v.members {
		p := m.val
		if p.kind != kindObject {
			d.add(p.off, "", `prices: model %q is %s; want {"input": 2.5, "cached_input": 1.25, "output": 10} (dollars per million tokens)`, m.key, describe(p))
			continue
		}
		d.uniqueKeys(p, "")
		for _, pm := range p.members {
			if !contains(priceKeys, pm.key) {
				d.add(pm.keyOff, "", "prices: model %q: unknown field %q (known: %s)", m.key, pm.key, strings.Join(priceKeys, ", "))
			}
		}
		get := func(key string) float64 {
			if n := d.amount(p, key, "", "prices: model "+strconv.Quote(m.key)+": "); n != nil {
				return *n
			}
			return 0
		}
		out[m.key] = Price{Input: get("input"), CachedInput: get("cached_input"), Output: get("output")}
	}
	return out
}

// amount returns the number field key (0 or more, fractions allowed: an
// amount of dollars), or nil when absent, null or not such a number;
// where prefixes its problems.
func (d *decoder) amount(obj *node, key, id, where string) *float64 {
	v := obj.get(key)
	if v == nil || v.kind == kindNull {
		return nil
	}
	if v.kind != kindNumber {
		d.add(v.off, id, "%s%q is %s; want a number of dollars, such as 2.5", where, key, describe(v))
		return nil
	}
	n, err := strconv.ParseFloat(string(v.raw), 64)
	switch {
	case err != nil || math.IsInf(n, 0):
		d.add(v.off, id, "%s%q is %s; want a number of dollars, such as 2.5", where, key, v.raw)
		return nil
	case n < 0:
		d.add(v.off, id, "%s%q is %s; want 0 or more", where, key, v.raw)
		return nil
	}
	return &n
}
