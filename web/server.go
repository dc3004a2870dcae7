package web

import (
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/internal/taskid"
	"github.com/statgraph/statgraph/statgraph/gate"
	"github.com/statgraph/statgraph/tasks"
)

//go:embed static
var static embed.FS

// maxSmallBody caps every body but a new task's (tasks.MaxNewTaskBytes).
const maxSmallBody = 64 << 10

// cookieName holds the token for the page's requests and EventSource.
const cookieName = "statgraph_token"

// Handler serves the UI and API of c. Every request must carry token (see
// the package doc); token "" serves loopback Hosts only, without one.
// The handler is safe for concurrent use; an events stream ends when its
// request's context does (the client leaves or the server shuts down).
func Handler(c *control.Control, token string) http.Handler {
	s := &server{c: c, token: token}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/tasks", s.tasks)
	mux.HandleFunc("POST /api/tasks", s.addTask)
	mux.HandleFunc("GET /api/tasks/{id}", s.task)
	mux.HandleFunc("GET /api/tasks/{id}/diff", s.diff)
	mux.HandleFunc("POST /api/tasks/{id}/answer", s.answer)
	mux.HandleFunc("POST /api/tasks/{id}/review", s.review)
	mux.HandleFunc("POST /api/tasks/{id}/pick", s.pick)
	mux.HandleFunc("POST /api/tasks/{id}/expand", s.expand)
	mux.HandleFunc("GET /api/land", s.landQueues)
	mux.HandleFunc("POST /api/land", s.land)
	mux.HandleFunc("POST /api/plan", s.planSpec)
	mux.HandleFunc("POST /api/complexity", s.complexity)
	mux.HandleFunc("GET /api/events", s.events)
	mux.HandleFunc("GET /api/run", s.runInfo)
	mux.HandleFunc("GET /api/workers", s.workers)
	mux.HandleFunc("POST /api/run", s.start)
	mux.HandleFunc("POST /api/stop", s.stop)
	mux.HandleFunc("POST /api/reset", s.reset)
	mux.HandleFunc("GET /api/graph.svg", s.graph)
	// Other methods on the API's paths get 405, other paths 404.
	paths := http.NewServeMux()
	for _, p := range []string{"/api/tasks", "/api/tasks/{id}", "/api/tasks/{id}/diff", "/api/tasks/{id}/answer", "/api/tasks/{id}/pick",
		"/api/tasks/{id}/review", "/api/tasks/{id}/expand", "/api/land", "/api/plan", "/api/complexity", "/api/events", "/api/run", "/api/workers", "/api/stop", "/api/reset", "/api/graph.svg"} {
		paths.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			writeError(w, http.StatusMethodNotAllowed, "method %s is not allowed on %s; see docs/web-and-mcp.md", r.Method, r.URL.Path)
		})
	}
	paths.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such API endpoint %s; docs/web-and-mcp.md lists them", r.URL.Path)
	})
	mux.Handle("/api/", paths)
	sub, _ := fs.Sub(static, "static")
	files := http.FileServerFS(sub)
	page := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	}
	mux.HandleFunc("GET /{$}", page)
	mux.HandleFunc("GET /{file}", page)
	return s.guard(mux)
}

type server struct {
	c     *control.Control
	token string
}

// guard applies the access rules before any handler runs.
func (s *server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'")
		if s.token == "" {
			if !loopbackHost(r.Host) {
				writeError(w, http.StatusForbidden, "host %q refused: without a token this server answers only loopback names (127.0.0.1, localhost, [::1]); start statgraph serve with a token to serve other addresses", r.Host)
				return
			}
		} else if ok, answered := s.authorized(w, r); answered {
			return
		} else if !ok {
			writeError(w, http.StatusUnauthorized, "a token is required: open the page through the address statgraph serve printed at start (/?token=...), or send Authorization: Bearer TOKEN")
			return
		}
		if r.Method == http.MethodPost { // the only method that changes something
			if o := r.Header.Get("Origin"); o != "" {
				if u, err := url.Parse(o); err != nil || u.Host != r.Host {
					writeError(w, http.StatusForbidden, "origin %q refused: requests that change something must come from this server's own page", o)
					return
				}
			}
			if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
				writeError(w, http.StatusUnsupportedMediaType, "send the body as JSON with Content-Type: application/json")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// authorized checks the token in the header or the cookie. A page request
// (GET outside /api/) carrying the right token in its query is answered
// here: the cookie is set and the browser sent to the same page without
// the token; answered reports that.
func (s *server) authorized(w http.ResponseWriter, r *http.Request) (ok, answered bool) {
	if q := r.URL.Query(); q.Has("token") && r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/api/") {
		if !s.is(q.Get("token")) {
			return false, false
		}
		http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		q.Del("token")
		u := url.URL{Path: path.Clean("/" + r.URL.Path), RawQuery: q.Encode()}
		http.Redirect(w, r, u.String(), http.StatusSeeOther)
		return true, true
	}
	if a, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); found {
		return s.is(a), false
	}
	if ck, err := r.Cookie(cookieName); err == nil {
		return s.is(ck.Value), false
	}
	return false, false
}

// is reports, in constant time, whether got is the token.
func (s *server) is(got string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) == 1
}

// LoginURL is the address that logs a browser in to a server at base
// (scheme and host, e.g. "http://127.0.0.1:7777") made with token: its page
// with the token in the query, which the server exchanges for the cookie
// (see the package doc). token "" gives the page's address.
func LoginURL(base, token string) string {
	u := strings.TrimSuffix(base, "/") + "/"
	if token == "" {
		return u
	}
	return u + "?token=" + url.QueryEscape(token)
}

// loopbackHost reports whether host (a Host header, with or without a
// port) names the loopback interface.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// IsLoopback reports whether addr (host:port as given to --addr) binds a
// loopback address only; an empty host (all interfaces) is not.
func IsLoopback(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	if err != nil || h == "" {
		return false
	}
	return loopbackHost(h)
}

// TasksResponse is GET /api/tasks.
type TasksResponse struct {
	Tasks []control.TaskInfo `json:"tasks"`
	Run   control.RunInfo    `json:"run"`
	File  string             `json:"file"`
}

func (s *server) tasks(w http.ResponseWriter, r *http.Request) {
	ts, err := s.c.Tasks(r.Context())
	if err != nil {
		writeErr(w, err)
		return
	}
	if ts == nil {
		ts = []control.TaskInfo{}
	}
	writeJSON(w, http.StatusOK, TasksResponse{Tasks: ts, Run: s.c.Run(), File: s.c.File()})
}

// taskID returns the {id} path value when it is a valid task id, else
// answers 400 and returns "".
func taskID(w http.ResponseWriter, r *http.Request) string {
	id := r.PathValue("id")
	if why := taskid.Reason(id); why != "" {
		writeError(w, http.StatusBadRequest, "task id %q: %s; %s", id, why, taskid.Rule)
		return ""
	}
	return id
}

func (s *server) task(w http.ResponseWriter, r *http.Request) {
	id := taskID(w, r)
	if id == "" {
		return
	}
	h, err := s.c.History(r.Context(), id, r.URL.Query().Get("diff") != "0")
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, h)
}

// DiffResponse is GET /api/tasks/{id}/diff: the branch's diff against its
// base.
type DiffResponse struct {
	ID     string `json:"id"`
	Branch string `json:"branch"`
	Diff   string `json:"diff"`
	// Uncommitted is the live workspace's work not committed yet.
	Uncommitted string `json:"uncommitted,omitempty"`
}

func (s *server) diff(w http.ResponseWriter, r *http.Request) {
	id := taskID(w, r)
	if id == "" {
		return
	}
	h, err := s.c.History(r.Context(), id, true)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, DiffResponse{ID: id, Branch: h.Branch, Diff: h.Diff, Uncommitted: h.Uncommitted})
}

func (s *server) addTask(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, tasks.MaxNewTaskBytes))
	if err != nil {
		writeErr(w, err)
		return
	}
	id, err := s.c.AddTask(body)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]string{"id": id})
}

// AnswerRequest is the body of POST /api/tasks/{id}/answer: retry, skip
// or abort for a task out of attempts; approve, edit (Text the edited
// plan) or reject (Text the reason) for a plan waiting for approval.
type AnswerRequest struct {
	Answer gate.Answer `json:"answer"`
	Text   string      `json:"text,omitempty"`
}

func (s *server) answer(w http.ResponseWriter, r *http.Request) {
	id := taskID(w, r)
	if id == "" {
		return
	}
	var req AnswerRequest
	if !decode(w, r, &req) {
		return
	}
	if err := s.c.Reply(id, gate.Reply{Answer: req.Answer, Text: req.Text}); err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": id, "answer": string(req.Answer)})
}

// ReviewRequest is the body of POST /api/tasks/{id}/review: comments on
// lines of the task's diff, sent back as the feedback of a new attempt
// (control.Review); with Run set, a run starts at once to make it.
type ReviewRequest struct {
	Comments []control.Comment `json:"comments"`
	Run      bool              `json:"run,omitempty"`
}

func (s *server) review(w http.ResponseWriter, r *http.Request) {
	id := taskID(w, r)
	if id == "" {
		return
	}
	var req ReviewRequest
	if !decode(w, r, &req) {
		return
	}
	if err := s.c.Review(r.Context(), id, req.Comments); err != nil {
		writeErr(w, err)
		return
	}
	if req.Run {
		if err := s.c.Start(r.Context(), control.StartOptions{}); err != nil {
			writeErr(w, fmt.Errorf("task %s was sent back, but the run to make its new attempt did not start: %w", id, err))
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "comments": len(req.Comments), "run": req.Run})
}

// RunRequest is the body of POST /api/run.
type RunRequest struct {
	RetryFailed bool `json:"retry_failed"`
}

func (s *server) start(w http.ResponseWriter, r *http.Request) {
	var req RunRequest
	if !decode(w, r, &req) {
		return
	}
	if err := s.c.Start(r.Context(), control.StartOptions{RetryFailed: req.RetryFailed}); err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, s.c.Run())
}

// WorkersResponse is GET /api/workers: the workers of the queue the
// plan's runs used (none for a plan run in one process).
type WorkersResponse struct {
	Workers []control.WorkerInfo `json:"workers"`
}

func (s *server) workers(w http.ResponseWriter, r *http.Request) {
	ws, err := s.c.Workers(r.Context())
	if err != nil {
		writeErr(w, err)
		return
	}
	if ws == nil {
		ws = []control.WorkerInfo{}
	}
	writeJSON(w, http.StatusOK, WorkersResponse{Workers: ws})
}

func (s *server) runInfo(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.c.Run())
}

func (s *server) stop(w http.ResponseWriter, r *http.Request) {
	var req struct{}
	if !decode(w, r, &req) {
		return
	}
	if err := s.c.Stop(false); err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]bool{"stopping": true})
}

// ResetRequest is the body of POST /api/reset: no ids means every failed
// or blocked task.
type ResetRequest struct {
	IDs []string `json:"ids"`
}

func (s *server) reset(w http.ResponseWriter, r *http.Request) {
	var req ResetRequest
	if !decode(w, r, &req) {
		return
	}
	for _, id := range req.IDs {
		if why := taskid.Reason(id); why != "" {
			writeError(w, http.StatusBadRequest, "task id %q: %s; %s", id, why, taskid.Rule)
			return
		}
	}
	done, err := s.c.Reset(req.IDs...)
	if err != nil {
		writeErr(w, err)
		return
	}
	if done == nil {
		done = []string{}
	}
	writeJSON(w, http.StatusOK, map[string][]string{"reset": done})
}

// PickRequest is the body of POST /api/tasks/{id}/pick: the candidate of a
// best-of-N task to make its winner.
type PickRequest struct {
	K int `json:"k"`
}

func (s *server) pick(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if why := taskid.Reason(id); why != "" {
		writeError(w, http.StatusBadRequest, "task id %q: %s; %s", id, why, taskid.Rule)
		return
	}
	var req PickRequest
	if !decode(w, r, &req) {
		return
	}
	if req.K < 1 {
		writeError(w, http.StatusBadRequest, "\"k\" is %d; give the number of a candidate (1 up) as GET /api/tasks/%s lists them", req.K, id)
		return
	}
	sel, err := s.c.Pick(r.Context(), id, req.K)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, sel)
}

func (s *server) graph(w http.ResponseWriter, r *http.Request) {
	g, err := control.Graph()
	if err != nil {
		writeErr(w, err)
		return
	}
	svg, err := g.Draw("svg")
	if err != nil {
		writeErr(w, err)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "max-age=3600")
	io.WriteString(w, svg)
}

// events streams the Control's events as Server-Sent Events: "event:" is
// the kind, "data:" the event as JSON, "id:" its sequence number. The
// first event is a resync (read /api/tasks); a comment line every 15s
// keeps proxies from closing an idle stream.
func (s *server) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "streaming is not supported by this connection")
		return
	}
	sub := s.c.Subscribe(256)
	defer sub.Close()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(e control.Event) bool {
		data, _ := json.Marshal(e)
		_, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.Seq, e.Kind, data)
		fl.Flush()
		return err == nil
	}
	if !send(control.Event{Kind: control.EventResync, Time: time.Now()}) {
		return
	}
	beat := time.NewTicker(15 * time.Second)
	defer beat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case e, ok := <-sub.C:
			if !ok || !send(e) {
				return
			}
		case <-beat.C:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
		}
	}
}

// decode reads a small JSON body into v, refusing unknown fields, trailing
// data and bodies over maxSmallBody (decodeUpTo: over its limit); on failure it answers and returns
// false. An empty body counts as {}.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	return decodeUpTo(w, r, v, maxSmallBody)
}

// decodeUpTo is decode with a cap of limit bytes.
func decodeUpTo(w http.ResponseWriter, r *http.Request, v any, limit int64) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		writeErr(w, err)
		return false
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return true
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "request body: %s", err)
		return false
	}
	if dec.More() {
		writeError(w, http.StatusBadRequest, "request body: one JSON object expected, found more after it")
		return false
	}
	return true
}

// ErrorResponse is the body of every error answer.
type ErrorResponse struct {
	Error    string          `json:"error"`
	Problems []tasks.Problem `json:"problems,omitempty"`
}

// webWords are the API's names for the operations control's advice
// points to.
var webWords = control.Words{List: "GET /api/tasks", Progress: "GET /api/run", Stop: "POST /api/stop"}

// writeErr answers err with the status of its kind (control.Classify,
// control.Kind.HTTPStatus), its message as it is and the advice.
func writeErr(w http.ResponseWriter, err error) {
	kind, advice := control.Classify(err, webWords)
	var ve *tasks.ValidationError
	var mbe *http.MaxBytesError
	msg := err.Error()
	switch {
	case errors.As(err, &mbe):
		msg = fmt.Sprintf("request body over %d bytes", mbe.Limit)
	case errors.As(err, &ve):
		writeJSON(w, kind.HTTPStatus(), ErrorResponse{Error: "the tasks file would not be valid; nothing was changed:\n" + msg, Problems: ve.Problems})
		return
	}
	if advice != "" {
		msg += "; " + advice
	}
	writeError(w, kind.HTTPStatus(), "%s", msg)
}

func writeError(w http.ResponseWriter, status int, format string, args ...any) {
	writeJSON(w, status, ErrorResponse{Error: fmt.Sprintf(format, args...)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
