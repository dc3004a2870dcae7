// Package otel turns the runs of statgraph graphs into OpenTelemetry spans:
// one span per run and, as its children, one span per node attempt, so that
// spans a node makes itself (an HTTP call, a model call) nest under the
// attempt that made them. Retries, routes (a gate's decision among them) and interrupts
// are recorded as span events.
//
// The package uses only the OpenTelemetry API: it makes spans through a
// trace.TracerProvider (the global one unless told otherwise), which does
// nothing until the program installs an SDK. The library package statgraph
// itself does not depend on OpenTelemetry; the seam it offers is
// statgraph.WithNodeHook.
//
//	tr := &otel.Tracer{} // the global TracerProvider
//	for ev, err := range otel.Stream(ctx, tr, g, input, statgraph.WithThread("t1")) {
//		...
//	}
package otel
