// Package obs is the seam through which the orchestrator's packages report
// the operations worth a trace span (a model call, a check, an agent CLI
// run) without depending on a tracing library: a Hook carried by the
// context, in the manner of net/http/httptrace. Package internal/telemetry
// installs one that makes OpenTelemetry spans; without a hook, Start costs
// one context lookup and reports nothing.
package obs

import "context"

// Attr is one attribute of an operation. Value is a string, bool, int,
// int64, float64 or []string; the hook decides what to do with other types.
type Attr struct {
	Key   string
	Value any
}

// String, Int, Float and Bool make attributes.
func String(k, v string) Attr        { return Attr{k, v} }
func Int(k string, v int) Attr       { return Attr{k, v} }
func Float(k string, v float64) Attr { return Attr{k, v} }
func Bool(k string, v bool) Attr     { return Attr{k, v} }

// End finishes an operation with its error (nil when it succeeded) and
// attributes learned while it ran. It must be called exactly once.
type End func(err error, attrs ...Attr)

// Hook starts an operation named name under the operation ctx carries and
// returns the ctx to run it with (carrying it as the parent of operations
// it starts) and the function that ends it. It is called from any
// goroutine and must be safe for concurrent use.
type Hook func(ctx context.Context, name string, attrs []Attr) (context.Context, End)

type hookKey struct{}

// With returns ctx carrying h; a nil h removes the hook.
func With(ctx context.Context, h Hook) context.Context {
	return context.WithValue(ctx, hookKey{}, h)
}

// Enabled reports whether ctx carries a hook.
func Enabled(ctx context.Context) bool {
	h, _ := ctx.Value(hookKey{}).(Hook)
	return h != nil
}

// Start begins an operation through the hook ctx carries. Without one it
// returns ctx unchanged and an End that does nothing.
func Start(ctx context.Context, name string, attrs ...Attr) (context.Context, End) {
	h, _ := ctx.Value(hookKey{}).(Hook)
	if h == nil {
		return ctx, noEnd
	}
	return h(ctx, name, attrs)
}

func noEnd(error, ...Attr) {}
