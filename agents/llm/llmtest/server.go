package llmtest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Path is the OpenAI chat-completions endpoint a [Server] answers; it also
// speaks the Responses, Anthropic Messages and Gemini APIs (see
// [ResponsesPath]).
const Path = "/v1/chat/completions"

// Server is a scripted model server: OpenAI-compatible chat completions,
// and the other APIs of [ResponsesPath], all answered from one script. It
// answers from a queue of replies, then from a fallback [ReplyFunc], and
// records the body and key of every request. A request that asks for a
// stream ("stream": true, or Gemini's :streamGenerateContent) gets its
// reply as server-sent events; GET [ModelsPath] gets an empty model list.
// Its methods are safe for concurrent use.
//
// A request that is not a POST to one of the APIs' paths (or a GET of
// [ModelsPath]), that arrives with nothing left to answer it, or that the
// fallback cannot decode fails the test with t.Errorf and gets a 418 or
// 400 response.
type Server struct {
	srv *httptest.Server
	t   testing.TB

	mu       sync.Mutex // guards the fields below
	queue    []Reply
	fallback ReplyFunc
	bodies   [][]byte
	paths    []string // of each body, telling its dialect
	auth     []string
}

// NewServer starts a Server on a loopback port that answers with replies
// in order. It is closed when the test ends.
func NewServer(t testing.TB, replies ...Reply) *Server {
	t.Helper()
	s := &Server{t: t, queue: replies}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// URL returns the server's root URL, such as http://127.0.0.1:41234.
func (s *Server) URL() string { return s.srv.URL }

// BaseURL returns the URL a client's base URL should be set to: URL
// followed by /v1.
func (s *Server) BaseURL() string { return s.srv.URL + "/v1" }

// Client returns an HTTP client that talks to the server and whose idle
// connections Close closes.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Close shuts the server down, waits for its requests to end, and closes
// the idle connections of [Server.Client]. It may be called more than
// once; NewServer arranges a call when the test ends.
func (s *Server) Close() {
	s.srv.Close()
	s.srv.Client().CloseIdleConnections()
}

// SetFallback makes f answer every request that arrives once the queue is
// empty; nil (the default) fails the test on such a request. f may be
// called from several goroutines at once.
func (s *Server) SetFallback(f ReplyFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fallback = f
}

// Reset forgets the requests recorded so far and replaces the queue with
// replies; the fallback stays. Benchmarks use it to run one script per
// iteration without the record growing.
func (s *Server) Reset(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue[:0], replies...)
	s.bodies, s.paths, s.auth = s.bodies[:0], s.paths[:0], s.auth[:0]
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == ModelsPath && r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, modelsBody)
		return
	}
	body, err := io.ReadAll(r.Body)
	if count, ok := tokenCount(r.URL.Path); ok && err == nil && r.Method == http.MethodPost {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, count)
		return
	}
	d := dialectOf(r.URL.Path)
	if err != nil || d == nil || r.Method != http.MethodPost {
		s.t.Errorf("llmtest: unexpected request %s %s (read error: %v); want POST %s, %s, %s or %s<model>:generateContent", r.Method, r.URL.Path, err, Path, ResponsesPath, MessagesPath, GeminiPrefix)
		http.Error(w, "unexpected request", http.StatusTeapot)
		return
	}
	rep, ok := s.next(w, d, r.URL.Path, body, authOf(r))
	if !ok {
		return
	}
	if rep.Delay > 0 {
		timer := time.NewTimer(rep.Delay)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-r.Context().Done():
			return
		}
	}
	d.write(w, rep, d.wantsStreamOf(r.URL.Path, body))
}

// authOf returns the key a request carries: its Authorization header, or
// the header the Anthropic and Gemini APIs send it in, as "x-api-key: KEY"
// or "x-goog-api-key: KEY"; "" when there is none.
func authOf(r *http.Request) string {
	if a := r.Header.Get("Authorization"); a != "" {
		return a
	}
	for _, h := range []string{"x-api-key", "x-goog-api-key"} {
		if v := r.Header.Get(h); v != "" {
			return h + ": " + v
		}
	}
	return ""
}

// next records a request of dialect d to path and picks its reply. If it
// has none, it fails the test, answers w itself and returns false.
func (s *Server) next(w http.ResponseWriter, d *dialect, path string, body []byte, auth string) (Reply, bool) {
	s.mu.Lock()
	s.bodies = append(s.bodies, body)
	s.paths = append(s.paths, path)
	s.auth = append(s.auth, auth)
	n := len(s.bodies)
	if len(s.queue) > 0 {
		rep := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		return rep, true
	}
	fallback := s.fallback
	s.mu.Unlock()
	if fallback == nil {
		s.t.Errorf("llmtest: no reply left for request %d: script more replies or call SetFallback", n)
		http.Error(w, "no reply scripted", http.StatusTeapot)
		return Reply{}, false
	}
	req, err := d.decode(path, body)
	if err != nil {
		s.t.Errorf("llmtest: request %d is not a %s: %v", n, d.name, err)
		http.Error(w, "request is not a "+d.name, http.StatusBadRequest)
		return Reply{}, false
	}
	return fallback(req), true
}

// Requests returns the requests received so far, read as chat requests
// (see [ResponsesPath] for the other APIs), in the order they arrived. A
// body that does not decode fails the test at once (t.Fatalf), so call it
// from the test's goroutine.
func (s *Server) Requests() []openai.ChatCompletionRequest {
	s.t.Helper()
	bodies := s.RawBodies()
	s.mu.Lock()
	paths := append([]string(nil), s.paths[:len(bodies)]...)
	s.mu.Unlock()
	out := make([]openai.ChatCompletionRequest, len(bodies))
	for i, b := range bodies {
		d := dialectOf(paths[i])
		var err error
		if out[i], err = d.decode(paths[i], []byte(b)); err != nil {
			s.t.Fatalf("llmtest: request %d is not a %s: %v\n%s", i+1, d.name, err, b)
		}
	}
	return out
}

// RawBodies returns the bodies of the requests received so far, as sent,
// in the order they arrived.
func (s *Server) RawBodies() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.bodies))
	for i, b := range s.bodies {
		out[i] = string(b)
	}
	return out
}

// AuthHeaders returns the key each request received so far carried (see
// authOf: its Authorization header, "x-api-key: KEY" or "x-goog-api-key:
// KEY"; "" where there was none), in the order they arrived.
func (s *Server) AuthHeaders() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auth...)
}

// Count returns how many model requests (to [Path] or another API's path)
// have arrived, including those
// that found no reply.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}
