package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	global "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// flushTimeout bounds the export of the spans left at the end of a run.
const flushTimeout = 5 * time.Second

// tracingFromEnv sets up OpenTelemetry tracing as the standard OTEL_*
// variables ask, and returns the provider to trace with and the function
// that flushes and stops it (call it once, at the end of the run).
//
// Tracing is on only when configured: OTEL_TRACES_EXPORTER=otlp, or an
// OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) with OTEL_TRACES_EXPORTER unset;
// OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn it off. Then
// the provider is nil and nothing is set up. The protocol is
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL:
// http/protobuf (the default) or grpc; the exporters read the endpoint,
// headers, timeout and TLS settings from their own OTEL_EXPORTER_OTLP_*
// variables, and the resource OTEL_SERVICE_NAME (default "statgraph") and
// OTEL_RESOURCE_ATTRIBUTES.
//
// Tracing never fails a run: a setting it cannot honour, and the first
// failure to export (an unreachable collector), are one warning on warn.
func tracingFromEnv(ctx context.Context, getenv func(string) string, warn io.Writer) (trace.TracerProvider, func()) {
	nothing := func() {}
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return nil, nothing
	}
	exporter := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")))
	if exporter == "" && (getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "") {
		exporter = "otlp"
	}
	switch exporter {
	case "", "none":
		return nil, nothing
	case "otlp":
	default:
		fmt.Fprintf(warn, "statgraph: warning: OTEL_TRACES_EXPORTER=%q is not supported (use otlp or none); no traces are exported\n", exporter)
		return nil, nothing
	}
	var once sync.Once
	warnOnce := func(err error) {
		once.Do(func() {
			fmt.Fprintf(warn, "statgraph: warning: cannot export traces: %v; the run goes on, its spans may be lost (check OTEL_EXPORTER_OTLP_ENDPOINT and that the collector is up)\n", err)
		})
	}
	protocol := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
	if protocol == "" {
		protocol = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))
	}
	var exp sdktrace.SpanExporter
	var err error
	switch protocol {
	case "", "http/protobuf":
		exp, err = otlptracehttp.New(ctx)
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	default:
		fmt.Fprintf(warn, "statgraph: warning: OTLP protocol %q is not supported (use http/protobuf or grpc); no traces are exported\n", protocol)
		return nil, nothing
	}
	if err != nil {
		warnOnce(err)
		return nil, nothing
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "statgraph"), attribute.String("service.version", version())),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		warnOnce(err)
	}
	// Export errors happen in the SDK's goroutines, which report them to
	// the global handler: one warning, whatever their number.
	global.SetErrorHandler(global.ErrorHandlerFunc(warnOnce))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return tp, func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
		defer cancel()
		if err := tp.Shutdown(ctx); err != nil {
			warnOnce(err)
		}
	}
}
