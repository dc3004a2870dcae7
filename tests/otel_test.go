package tests

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/statgraph/statgraph/internal/gittest"
)

// otlpReceiver is an OTLP trace receiver, over HTTP (newOTLPReceiver) or
// gRPC (newOTLPGRPCReceiver): it keeps the spans of each
// ExportTraceServiceRequest with their resource's service.name.
type otlpReceiver struct {
	URL      string     // the endpoint to give OTEL_EXPORTER_OTLP_ENDPOINT
	mu       sync.Mutex // guards the fields below
	spans    []*tracepb.Span
	services []string
	requests int
}

// keep records the spans of one export request.
func (r *otlpReceiver) keep(in *coltracepb.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	for _, rs := range in.ResourceSpans {
		service := stringAttr(rs.GetResource().GetAttributes(), "service.name")
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				r.spans = append(r.spans, sp)
				r.services = append(r.services, service)
			}
		}
	}
}

// newOTLPReceiver serves OTLP/HTTP: protobuf ExportTraceServiceRequests
// posted to /v1/traces.
func newOTLPReceiver(t *testing.T) *otlpReceiver {
	r := &otlpReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" || err != nil {
			t.Errorf("OTLP receiver: unexpected %s %s (%s): %v", req.Method, req.URL.Path, req.Header.Get("Content-Type"), err)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		var in coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &in); err != nil {
			t.Errorf("OTLP receiver: decoding ExportTraceServiceRequest: %v", err)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		r.keep(&in)
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// grpcTraceService is the OTLP collector's TraceService on a grpc.Server.
type grpcTraceService struct {
	coltracepb.UnimplementedTraceServiceServer
	r *otlpReceiver
}

func (s grpcTraceService) Export(_ context.Context, in *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	s.r.keep(in)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// newOTLPGRPCReceiver serves OTLP/gRPC, the collector's TraceService,
// without TLS on a loopback port; its URL is http://127.0.0.1:port, which
// tells the exporter to connect insecurely.
func newOTLPGRPCReceiver(t *testing.T) *otlpReceiver {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer()
	r := &otlpReceiver{URL: "http://" + l.Addr().String()}
	coltracepb.RegisterTraceServiceServer(srv, grpcTraceService{r: r})
	go srv.Serve(l)
	t.Cleanup(srv.Stop)
	return r
}

func (r *otlpReceiver) got() ([]*tracepb.Span, []string, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*tracepb.Span(nil), r.spans...), append([]string(nil), r.services...), r.requests
}

func stringAttr(kvs []*commonpb.KeyValue, key string) string {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}

func intAttr(kvs []*commonpb.KeyValue, key string) int64 {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.GetValue().GetIntValue()
		}
	}
	return -1
}

// TestRunExportsOTLP runs the real binary on an LLM task (the scripted
// model; the first attempt fails its check, the second passes) configured
// only by OTEL_* variables, and decodes what it exports to an OTLP/HTTP
// receiver: the run → task → attempt → node tree, the model calls with
// their tokens and the checks with their exit codes, under the service
// name given.
func TestRunExportsOTLP(t *testing.T) {
	t.Parallel()
	recv := newOTLPReceiver(t)
	runExportingTo(t, "OTEL_EXPORTER_OTLP_ENDPOINT="+recv.URL)
	checkRunSpans(t, recv)
}

// TestRunExportsOTLPGRPC is TestRunExportsOTLP over gRPC: the binary is
// told the protocol only by OTEL_EXPORTER_OTLP_PROTOCOL=grpc, and the
// receiver is the collector's TraceService on a grpc.Server, so the same
// span tree must arrive through otlptracegrpc.
func TestRunExportsOTLPGRPC(t *testing.T) {
	t.Parallel()
	recv := newOTLPGRPCReceiver(t)
	runExportingTo(t, "OTEL_EXPORTER_OTLP_ENDPOINT="+recv.URL, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc")
	checkRunSpans(t, recv)
}

// A run that statgraph mcp's run_pending starts is traced as a terminal
// run is, from the same OTEL_* variables: the same span tree reaches the
// OTLP/HTTP receiver, flushed when the session ends. The run's model
// requests are bounded by mcp's --request-timeout, a run flag it shares.
func TestMCPRunExportsOTLP(t *testing.T) {
	t.Parallel()
	recv := newOTLPReceiver(t)
	m := newTokenModel(t)
	dir := newRepo(t, map[string]string{"tasks.json": tokenTasks})
	env := append(m.env(), "OTEL_EXPORTER_OTLP_ENDPOINT="+recv.URL, "OTEL_SERVICE_NAME=statgraph-e2e")
	cs, stderr := mcpSessionEnv(t, dir, env, "--model", "scripted", "--request-timeout", "30s", filepath.Join(dir, "tasks.json"))
	var run struct{ Running bool }
	mcpCall(t, cs, "run_pending", nil, &run)
	require.True(t, run.Running)
	st := mcpWaitRun(t, cs)
	require.Equal(t, map[string]int{"done": 1}, st.Counts, "stderr:\n%s", stderr)
	require.NoError(t, cs.Close(), "stderr:\n%s", stderr)
	require.NotContains(t, stderr.String(), "warning: cannot export traces")
	checkRunSpans(t, recv)
}

// runExportingTo runs tokenTasks with the scripted model and the OTEL_*
// variables env (plus OTEL_SERVICE_NAME=statgraph-e2e), and requires that
// the run succeeded without an export warning.
func runExportingTo(t *testing.T, env ...string) {
	m := newTokenModel(t)
	dir := newRepo(t, map[string]string{"tasks.json": tokenTasks})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, stdout, stderr := command(ctx, dir, "run", "--model", "scripted", "tasks.json")
	cmd.Env = append(cmd.Env, m.env()...)
	cmd.Env = append(cmd.Env, env...)
	cmd.Env = append(cmd.Env, "OTEL_SERVICE_NAME=statgraph-e2e")
	r := wait(t, cmd.Run(), stdout, stderr)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.NotContains(t, r.stderr, "warning: cannot export traces")
}

// checkRunSpans checks what recv received from runExportingTo: the run →
// task → attempt → node tree, the model calls with their tokens and the
// checks with their exit codes, under the service name given.
func checkRunSpans(t *testing.T, recv *otlpReceiver) {
	spans, services, _ := recv.got()
	require.NotEmpty(t, spans, "the run's spans were flushed before it exited")
	for _, s := range services {
		require.Equal(t, "statgraph-e2e", s, "OTEL_SERVICE_NAME names the resource")
	}
	byID := map[string]*tracepb.Span{}
	named := map[string][]*tracepb.Span{}
	for _, s := range spans {
		byID[string(s.SpanId)] = s
		named[s.Name] = append(named[s.Name], s)
	}
	parent := func(s *tracepb.Span) string {
		if p, ok := byID[string(s.ParentSpanId)]; ok {
			return p.Name
		}
		return ""
	}
	require.Len(t, named["statgraph run"], 1)
	require.Len(t, named["task 1"], 1)
	require.Equal(t, "statgraph run", parent(named["task 1"][0]))
	require.Len(t, named["attempt"], 2)
	require.Len(t, named["executor"], 2)
	require.Len(t, named["verifier"], 2)
	for _, s := range append(named["executor"], named["verifier"]...) {
		require.Equal(t, "attempt", parent(s))
	}
	require.Equal(t, "task 1", parent(named["planner"][0]))

	chats := named["chat scripted"]
	require.Len(t, chats, 5, "a plan and two calls per attempt")
	var in, out int64
	for _, c := range chats {
		require.Contains(t, []string{"planner", "executor"}, parent(c))
		require.Equal(t, "scripted", stringAttr(c.Attributes, "gen_ai.request.model"))
		require.Equal(t, "chat", stringAttr(c.Attributes, "gen_ai.operation.name"))
		in += intAttr(c.Attributes, "gen_ai.usage.input_tokens")
		out += intAttr(c.Attributes, "gen_ai.usage.output_tokens")
	}
	require.Equal(t, int64(wantTokens), in+out, "the calls' tokens add up to what the scripted model returned")

	checks := named["check tests"]
	require.Len(t, checks, 2)
	require.Equal(t, int64(1), intAttr(checks[0].Attributes, "process.exit.code"), "attempt 1's check fails")
	require.Equal(t, int64(0), intAttr(checks[1].Attributes, "process.exit.code"))
	require.Equal(t, "grep -q 'attempt 2' out.txt", stringAttr(checks[0].Attributes, "process.command_line"))
	for _, c := range checks {
		require.Equal(t, "verifier", parent(c))
		for _, kv := range c.Attributes {
			require.NotContains(t, kv.GetValue().GetStringValue(), "test-key", "no secret in %s", kv.Key)
		}
	}
}

// TestRunTracingOffOrUnreachable: with OTEL_SDK_DISABLED=true nothing
// reaches the receiver; with a collector that refuses connections the run
// still succeeds, with one warning, within the flush timeout.
func TestRunTracingOffOrUnreachable(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{
		"tasks.json": `{"tasks": [{"id": 1, "title": "t", "test_cmd": "true", "executor": {"command": ["true"]}}]}`,
	})
	recv := newOTLPReceiver(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, stdout, stderr := command(ctx, dir, "run", "tasks.json")
	cmd.Env = append(cmd.Env, "OTEL_EXPORTER_OTLP_ENDPOINT="+recv.URL, "OTEL_SDK_DISABLED=true")
	r := wait(t, cmd.Run(), stdout, stderr)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	_, _, requests := recv.got()
	require.Zero(t, requests, "OTEL_SDK_DISABLED=true exports nothing")

	// A port nothing listens on: take one, then close it.
	l := httptest.NewServer(http.NotFoundHandler())
	dead := l.URL
	l.Close()
	gittest.Git(t, dir, "branch", "-D", "statgraph/"+planOf(t, dir, "tasks.json", "").Key+"/1")
	statgraph(t, dir, "reset", "1")
	cmd, stdout, stderr = command(ctx, dir, "run", "tasks.json")
	cmd.Env = append(cmd.Env, "OTEL_EXPORTER_OTLP_ENDPOINT="+dead)
	start := time.Now()
	r = wait(t, cmd.Run(), stdout, stderr)
	require.Equal(t, 0, r.code, "an unreachable collector never fails a run\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.Equal(t, 1, strings.Count(r.stderr, "warning: cannot export traces"), r.stderr)
	require.Less(t, time.Since(start), 60*time.Second)
}

// TestRunFlushesSpansOnCtrlC: a run stopped by Ctrl-C in the middle of a
// model call still exports its spans before it exits: the task's span,
// interrupted, and the spans of what ran before.
func TestRunFlushesSpansOnCtrlC(t *testing.T) {
	t.Parallel()
	m := newTokenModel(t)
	arrived := m.holdOnce(2, 30*time.Second)
	recv := newOTLPReceiver(t)
	dir := newRepo(t, map[string]string{"tasks.json": tokenTasks})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, stdout, stderr := command(ctx, dir, "run", "--model", "scripted", "tasks.json")
	cmd.Env = append(cmd.Env, m.env()...)
	cmd.Env = append(cmd.Env, "OTEL_EXPORTER_OTLP_ENDPOINT="+recv.URL)
	require.NoError(t, cmd.Start())
	select {
	case <-arrived:
	case <-ctx.Done():
		t.Fatal("the held model call never arrived")
	}
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	r := wait(t, cmd.Wait(), stdout, stderr)
	require.Equal(t, 130, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)

	spans, _, _ := recv.got()
	status := map[string]string{}
	count := map[string]int{}
	for _, s := range spans {
		count[s.Name]++
		if s.Name == "task 1" {
			status["task"] = stringAttr(s.Attributes, "statgraph.task.status")
		}
	}
	require.Equal(t, 1, count["statgraph run"], "the run's span was flushed on Ctrl-C")
	require.Equal(t, "interrupted", status["task"])
	require.Equal(t, 2, count["attempt"], "attempt 2 had started")
	require.Equal(t, 1, count["check tests"], "attempt 1's check ran")
}
