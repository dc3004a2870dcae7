package main

import (
	"context"
	"strings"
	"testing"
)

// TestTracingFromEnv: tracing is set up only when the OTEL_* variables ask
// for it, and a setting it cannot honour is a warning, not a failure.
func TestTracingFromEnv(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		on   bool
		warn string
	}{
		{name: "nothing configured"},
		{name: "endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, on: true},
		{name: "traces endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, on: true},
		{name: "exporter otlp, default endpoint", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, on: true},
		{name: "grpc", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, on: true},
		{name: "sdk disabled", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "TRUE"}},
		{name: "exporter none", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "none"}},
		{name: "exporter zipkin", env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, warn: `OTEL_TRACES_EXPORTER="zipkin" is not supported`},
		{name: "protocol http/json", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"}, warn: `OTLP protocol "http/json" is not supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env { // the exporters read their settings from the process's environment
				t.Setenv(k, v)
			}
			var warn strings.Builder
			tp, flush := tracingFromEnv(context.Background(), func(k string) string { return tt.env[k] }, &warn)
			defer flush()
			if got := tp != nil; got != tt.on {
				t.Fatalf("tracing on: got %v; want %v (warnings: %q)", got, tt.on, warn.String())
			}
			if tt.warn == "" && warn.Len() > 0 || !strings.Contains(warn.String(), tt.warn) {
				t.Fatalf("warnings: got %q; want %q", warn.String(), tt.warn)
			}
		})
	}
}
