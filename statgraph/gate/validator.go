package gate

// This file adds validators: nodes that record a Verdict for their gate.

import (
	"context"
	"fmt"
	"slices"

	"github.com/statgraph/statgraph/statgraph"
)

// ValidatorFunc is a validator's check. An error is a failure of the check
// itself (it could not run), not a failed check: it fails the node like
// any node error, under the node's statgraph.RetryPolicy.
type ValidatorFunc[S any] func(ctx context.Context, s S) (Verdict, error)

// Option configures a validator.
type Option func(*validator)

type validator struct {
	severity Severity
	mode     Mode
	node     []statgraph.NodeOption
	key      any // func(S) string of the Gates that made the option
}

// WithSeverity sets a validator's severity, and through it its default Mode.
func WithSeverity(s Severity) Option { return func(v *validator) { v.severity = s } }

// WithMode sets a validator's enforcement mode, overriding its severity's.
func WithMode(m Mode) Option { return func(v *validator) { v.mode = m } }

// WithNodeOptions passes options (timeout, retry policy...) to the
// validator's node.
func WithNodeOptions(opts ...statgraph.NodeOption) Option {
	return func(v *validator) { v.node = append(v.node, opts...) }
}

// InputKey declares what a validator's check depends on: key returns a
// string that changes whenever the check's input does (a hash of the files
// it reads, a commit id). A validator with a key reruns only what failed
// (the spec's Rerun FailedOnly): when its last verdict passed and key
// returns the same string, its node records that verdict again, with
// Reused set, without calling the check. The verdict is kept, with its key,
// in State.Kept. key runs in the validator's node, on the node's
// goroutine; it must not be nil.
func (g Gates[S]) InputKey(key func(s S) string) Option {
	return func(v *validator) { v.key = key }
}

// AddValidator adds a node called name to b that runs fn and records its
// Verdict in the state's State for the gate that lists it; it changes
// nothing else. Wire it with edges like any node: in a chain before its
// gate, or in parallel in the step before it, which needs a graph reducer
// that merges the State field with Merge. An InputKey option made by a
// Gates of another state type fails the node with an error saying so.
func (g Gates[S]) AddValidator(b *statgraph.Builder[S], name string, fn ValidatorFunc[S], opts ...Option) *statgraph.Builder[S] {
	var cfg validator
	for _, o := range opts {
		o(&cfg)
	}
	if fn == nil {
		return b.AddNode(name, nil) // the builder reports the nil function
	}
	key, keyed := cfg.key.(func(S) string)
	if cfg.key != nil && (!keyed || key == nil) {
		return b.AddNode(name, func(context.Context, S) (S, error) {
			var s S
			return s, statgraph.Permanent(fmt.Errorf("validator %q: its InputKey is nil or was made by a Gates of another state type (%T); make it with the Gates that adds the validator", name, cfg.key))
		}, cfg.node...)
	}
	return b.AddNode(name, func(ctx context.Context, s S) (S, error) {
		st := g.state(&s)
		var k string
		if key != nil {
			k = key(s)
			if i := verdictOf(st.Kept, name); i >= 0 && st.Kept[i].Passed && st.Kept[i].Key == k {
				v := st.Kept[i]
				v.Reused = true
				st.Verdicts = putVerdict(st.Verdicts, v)
				st.by = name
				return s, nil
			}
		}
		v, err := fn(ctx, s)
		if err != nil {
			return s, err
		}
		v.Validator, v.Reused = name, false
		if v.Severity == Critical {
			v.Severity = cfg.severity
		}
		if v.Mode == "" {
			v.Mode = cfg.mode
		}
		v.Mode = v.Mode.For(v.Severity)
		if key != nil {
			v.Key = k
			st.Kept = putVerdict(st.Kept, v)
		}
		st.Verdicts = putVerdict(st.Verdicts, v)
		st.by = name
		return s, nil
	}, cfg.node...)
}

// verdictOf returns the index of validator's verdict in vs, or -1.
func verdictOf(vs []Verdict, validator string) int {
	return slices.IndexFunc(vs, func(o Verdict) bool { return o.Validator == validator })
}

// putVerdict returns vs with v in place of its validator's earlier verdict,
// in a new slice: vs may be shared with earlier states.
func putVerdict(vs []Verdict, v Verdict) []Verdict {
	out := make([]Verdict, 0, len(vs)+1)
	for _, o := range vs {
		if o.Validator != v.Validator {
			out = append(out, o)
		}
	}
	return append(out, v)
}
