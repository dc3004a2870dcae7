package dispatch

import (
	"errors"
	"fmt"
	"time"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/tasks"
)

// park.go is quota parking: a unit stopped by its provider's usage or rate
// limit (an llm.LimitError, from the model client or an agent CLI's limit
// message) is neither failed nor crashed. It is recorded parked with the
// reset time (tasks.Outcome.ParkedUntil, durable in the journal and the
// file), no retry is used, the other units go on, and the loop starts it
// again at the reset time (loop.go keeps the parked units and a timer for
// the first reset). A reset beyond ParkMax ends the unit interrupted with
// the reason instead. An exhausted quota or credit (llm.ErrQuota) has no
// reset: the unit is interrupted and the run stops, saying what to do.

// DefaultParkMax is how long a run waits for a usage limit's reset when
// Dispatcher.ParkMax is 0: a day.
const DefaultParkMax = 24 * time.Hour

// DefaultParkDefault is how long a unit stays parked by a limit with no
// reset time (an llm.LimitError with Until zero: a real agent CLI giving
// up on a bare 429) when Dispatcher.ParkDefault is 0: 15 minutes.
const DefaultParkDefault = 15 * time.Minute

// parkDefault returns how long a limit with no reset time parks a unit:
// ParkDefault (or DefaultParkDefault), at most parkMax.
func (d *Dispatcher) parkDefault() time.Duration {
	p := d.ParkDefault
	if p <= 0 {
		p = DefaultParkDefault
	}
	return min(p, d.parkMax())
}

// parkMax returns the longest a run waits for a reset.
func (d *Dispatcher) parkMax() time.Duration {
	if d.ParkMax > 0 {
		return d.ParkMax
	}
	return DefaultParkMax
}

// parkResult returns the outcome of unit t stopped by err when err is a
// usage limit (parked until its reset, or interrupted when the reset is
// further than ParkMax from now) or an exhausted quota (interrupted, with
// stop set to the reason the run stops). s is the unit's state when the
// error came, as for infraResult. ok is false for any other error.
func (d *Dispatcher) parkResult(t tasks.Task, s agents.TaskState, err error, now time.Time) (r tasks.Outcome, stop string, ok bool) {
	r = tasks.Outcome{RetryCount: max(s.RetryCount, t.RetryCount), ErrorHistory: s.ErrorHistory}
	if len(t.ErrorHistory) > len(s.ErrorHistory) {
		r.ErrorHistory = t.ErrorHistory
	}
	if le, isLimit := errors.AsType[*llm.LimitError](err); isLimit {
		until, note := le.Until, ""
		if until.IsZero() {
			until = now.Add(d.parkDefault())
			note = fmt.Sprintf(" (no reset time given: waiting --park-default %s)", d.parkDefault())
		}
		if wait := until.Sub(now); wait > d.parkMax() {
			r.Status = tasks.StatusInterrupted
			r.Reason = fmt.Sprintf("usage limit resets at %s, beyond --park-max %s, no retry used: %s; run statgraph resume after the reset, or raise --park-max",
				until.Local().Format(time.RFC3339), d.parkMax(), oneLine(le.Reason))
			return r, "", true
		}
		r.Status, r.ParkedUntil = tasks.StatusParked, &until
		r.Reason = fmt.Sprintf("parked until %s by a usage limit%s, no retry used: %s", until.Local().Format(time.RFC3339), note, oneLine(le.Reason))
		return r, "", true
	}
	if errors.Is(err, llm.ErrQuota) {
		r.Status = tasks.StatusInterrupted
		r.Reason = "quota or credit exhausted, no retry used: " + oneLine(err.Error())
		return r, r.Reason, true
	}
	return tasks.Outcome{}, "", false
}

// quotaStop is the error a run ends with when a unit found the account's
// quota or credit exhausted: no new unit starts, since they would meet
// the same wall. It matches llm.ErrQuota with errors.Is.
type quotaStop struct {
	unit, reason string
}

func (e *quotaStop) Error() string {
	return fmt.Sprintf("the run stopped: task %s: %s; add credit or raise the account's limit, then run statgraph resume", e.unit, e.reason)
}

func (e *quotaStop) Unwrap() error { return llm.ErrQuota }

// parking holds a run's parked units and when each may run again. It is
// used by the dispatch loop's goroutine only.
type parking struct {
	until     map[string]time.Time
	t         *time.Timer
	announced bool // EventAllParked was sent since a unit last started or finished
}

// add parks unit id until t.
func (p *parking) add(id string, t time.Time) {
	if p.until == nil {
		p.until = map[string]time.Time{}
	}
	p.until[id] = t
}

// due removes and returns the units whose reset time is not after now.
func (p *parking) due(now time.Time) []string {
	var ids []string
	for id, t := range p.until {
		if !t.After(now) {
			ids = append(ids, id)
			delete(p.until, id)
		}
	}
	return ids
}

// timer returns a channel that fires at the first reset, or nil when no
// unit is parked.
func (p *parking) timer() <-chan time.Time {
	if len(p.until) == 0 {
		return nil
	}
	wait := max(time.Until(p.first()), 0)
	if p.t == nil {
		p.t = time.NewTimer(wait)
	} else {
		p.t.Reset(wait)
	}
	return p.t.C
}

func (p *parking) stop() {
	if p.t != nil {
		p.t.Stop()
	}
}

// first returns the earliest reset time, zero when none is parked.
func (p *parking) first() time.Time {
	var first time.Time
	for _, t := range p.until {
		if first.IsZero() || t.Before(first) {
			first = t
		}
	}
	return first
}
