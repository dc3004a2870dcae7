package web

import (
	"net/http"

	"github.com/statgraph/statgraph/control"
)

// spec.go serves the merge queue (statgraph land) and the operations that
// ask the model about the task list (statgraph plan, expand, complexity),
// each through its one operation in control.

// LandResponse is GET /api/land: the merge queue of every branch land ran
// onto, and the in-process run or land (Run.Onto is set for a land; a
// land that ended has its outcome in Run.Landing).
type LandResponse struct {
	Queues []control.LandQueue `json:"queues"`
	Run    control.RunInfo     `json:"run"`
}

func (s *server) landQueues(w http.ResponseWriter, r *http.Request) {
	qs, err := s.c.LandQueues(r.Context())
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, LandResponse{Queues: qs, Run: s.c.Run()})
}

// LandRequest is the body of POST /api/land: the branch to land the done
// tasks on.
type LandRequest struct {
	Onto string `json:"onto"`
}

func (s *server) land(w http.ResponseWriter, r *http.Request) {
	var req LandRequest
	if !decode(w, r, &req) {
		return
	}
	if req.Onto == "" {
		writeError(w, http.StatusBadRequest, "\"onto\" is empty; give the branch to land the done tasks on, e.g. {\"onto\": \"main\"}")
		return
	}
	if err := s.c.StartLand(r.Context(), req.Onto); err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, s.c.Run())
}

// PlanRequest is the body of POST /api/plan: a requirements document to
// write a new tag of the tasks file from (statgraph plan).
type PlanRequest struct {
	Spec  string `json:"spec"`
	Tag   string `json:"tag,omitempty"`
	Tasks int    `json:"tasks,omitempty"`
}

func (s *server) planSpec(w http.ResponseWriter, r *http.Request) {
	var req PlanRequest
	if !decodeUpTo(w, r, &req, control.MaxSpecBytes+maxSmallBody) {
		return
	}
	res, err := s.c.PlanSpec(r.Context(), req.Spec, req.Tag, req.Tasks)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, res)
}

// ExpandRequest is the body of POST /api/tasks/{id}/expand: about how
// many subtasks to add (0: the model chooses).
type ExpandRequest struct {
	Num int `json:"num,omitempty"`
}

// ExpandResponse is the answer of POST /api/tasks/{id}/expand.
type ExpandResponse struct {
	ID       string   `json:"id"`
	Subtasks []string `json:"subtasks"`
	Tokens   int      `json:"tokens"`
}

func (s *server) expand(w http.ResponseWriter, r *http.Request) {
	id := taskID(w, r)
	if id == "" {
		return
	}
	var req ExpandRequest
	if !decode(w, r, &req) {
		return
	}
	ids, tokens, err := s.c.Expand(r.Context(), id, req.Num)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, ExpandResponse{ID: id, Subtasks: ids, Tokens: tokens})
}

// ComplexityResponse is the answer of POST /api/complexity: the report,
// where it was written and the model's tokens.
type ComplexityResponse struct {
	Report control.ComplexityReport `json:"report"`
	Path   string                   `json:"path"`
	Tokens int                      `json:"tokens"`
}

func (s *server) complexity(w http.ResponseWriter, r *http.Request) {
	var req struct{}
	if !decode(w, r, &req) {
		return
	}
	path := s.c.ReportPath()
	rep, tokens, err := s.c.Complexity(r.Context(), path)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, ComplexityResponse{Report: rep, Path: path, Tokens: tokens})
}
