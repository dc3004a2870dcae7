package control

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/statgraph/statgraph/statgraph/gate"
)

// EventKind says what an Event reports.
type EventKind string

// Event kinds.
const (
	// EventTask: a unit's state changed; Task holds the new one.
	EventTask EventKind = "task"
	// EventRun: the in-process run started or ended; Run says which.
	EventRun EventKind = "run"
	// EventQuestion: a unit escalated; Question waits for Answer.
	EventQuestion EventKind = "question"
	// EventAnswer: a question was answered with Answer.
	EventAnswer EventKind = "answer"
	// EventResync: the subscriber missed events (it was slow) or the plan
	// changed as a whole (a task added, tasks reset): read Tasks again.
	EventResync EventKind = "resync"
)

// Event is one change a subscriber is told of. Time is when the change
// was noticed: for an EventTask, when the in-process run reported it, or
// the comparison that found it.
type Event struct {
	Seq      uint64      `json:"seq"`
	Time     time.Time   `json:"time"`
	Kind     EventKind   `json:"kind"`
	Unit     string      `json:"unit,omitempty"`
	Task     *TaskInfo   `json:"task,omitempty"`
	Run      *RunInfo    `json:"run,omitempty"`
	Question *Question   `json:"question,omitempty"`
	Answer   gate.Answer `json:"answer,omitempty"`
}

// Subscription receives a Control's events on C, in order, until Close.
// C is buffered; a subscriber that falls behind loses events rather than
// slowing the run, and then receives an EventResync once there is room.
type Subscription struct {
	C <-chan Event

	c      chan Event
	h      *hub
	lagged bool // guarded by h.mu
	closed bool // guarded by h.mu
}

// Subscribe returns a subscription with room for buffer events (at least
// 16). While any subscription is open the Control watches the plan: every
// Poll interval, and at once when the in-process run reports, it compares
// the units (Tasks) with what it last saw and sends an EventTask per
// changed unit, so a run started in a terminal is seen as well as its own.
// Close the subscription when done; Control.Close closes them all.
func (c *Control) Subscribe(buffer int) *Subscription {
	if buffer < 16 {
		buffer = 16
	}
	ch := make(chan Event, buffer)
	s := &Subscription{C: ch, c: ch, h: c.hub}
	c.hub.add(s)
	return s
}

// Close ends the subscription and closes C. It is idempotent.
func (s *Subscription) Close() { s.h.remove(s) }

// hub fans events out to subscribers and watches the plan while there are
// any.
type hub struct {
	c    *Control
	kick chan struct{} // a unit changed: compare now

	mu   sync.Mutex
	subs map[*Subscription]bool
	seq  uint64
	prev map[string]TaskInfo // the units as last compared
	// noticed holds when the in-process run reported a unit's change that
	// was not compared yet.
	noticed map[string]time.Time
	quit    chan struct{} // closes the watcher; nil when it is not running
	done    chan struct{}
	closed  bool
}

func newHub(c *Control) *hub {
	return &hub{c: c, kick: make(chan struct{}, 1), subs: map[*Subscription]bool{}, noticed: map[string]time.Time{}}
}

func (h *hub) add(s *Subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		s.closed = true
		close(s.c)
		return
	}
	h.subs[s] = true
	if h.quit == nil {
		h.quit, h.done = make(chan struct{}), make(chan struct{})
		go h.watch(h.quit, h.done)
	}
}

func (h *hub) remove(s *Subscription) {
	h.mu.Lock()
	if s.closed {
		h.mu.Unlock()
		return
	}
	s.closed = true
	delete(h.subs, s)
	close(s.c)
	var quit, done chan struct{}
	if len(h.subs) == 0 && h.quit != nil {
		quit, done = h.quit, h.done
		h.quit, h.done, h.prev = nil, nil, nil
	}
	h.mu.Unlock()
	if quit != nil {
		close(quit)
		<-done
	}
}

// close ends every subscription and the watcher.
func (h *hub) close() {
	h.mu.Lock()
	h.closed = true
	var subs []*Subscription
	for s := range h.subs {
		subs = append(subs, s)
	}
	h.mu.Unlock()
	for _, s := range subs {
		s.Close()
	}
}

// publish sends e to every subscriber without blocking: a full subscriber
// loses it and is sent an EventResync when it has room again.
func (h *hub) publish(e Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.publishLocked(e)
}

func (h *hub) publishLocked(e Event) {
	h.seq++
	e.Seq = h.seq
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	for s := range h.subs {
		if s.lagged && !h.resyncLocked(s) {
			continue
		}
		select {
		case s.c <- e:
		default:
			s.lagged = true
		}
	}
}

// resyncLocked tries to tell a lagging subscriber to re-read; h.mu held.
func (h *hub) resyncLocked(s *Subscription) bool {
	select {
	case s.c <- Event{Seq: h.seq, Time: time.Now(), Kind: EventResync}:
		s.lagged = false
		return true
	default:
		return false
	}
}

// resyncAll tells every subscriber to re-read everything, and compares
// the units now.
func (h *hub) resyncAll() {
	h.c.stored.forget()
	h.mu.Lock()
	h.publishLocked(Event{Kind: EventResync})
	h.mu.Unlock()
	h.changed("")
}

// changed asks the watcher to compare the units now, noting when unit
// changed (the Time of its next EventTask). It never waits for the
// watcher.
func (h *hub) changed(unit string) {
	if unit != "" {
		h.mu.Lock()
		if _, ok := h.noticed[unit]; !ok && h.quit != nil {
			h.noticed[unit] = time.Now()
		}
		h.mu.Unlock()
	}
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

// watch compares the units every Poll interval and on each kick until
// quit is closed.
func (h *hub) watch(quit, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(h.c.o.Poll)
	defer t.Stop()
	h.compare()
	for {
		select {
		case <-quit:
			return
		case <-h.kick:
		case <-t.C:
		}
		h.compare()
	}
}

// sameTask reports whether a and b show the same: every field equal,
// Dependencies element by element and Question by value.
func sameTask(a, b TaskInfo) bool {
	if a.ID != b.ID || a.Parent != b.Parent || a.Title != b.Title || a.Status != b.Status || a.Reason != b.Reason ||
		a.Phase != b.Phase || a.Node != b.Node || a.Attempt != b.Attempt || a.MaxAttempts != b.MaxAttempts ||
		a.Tokens != b.Tokens || a.Usage != b.Usage || !slices.Equal(a.Dependencies, b.Dependencies) ||
		(a.CostUSD == nil) != (b.CostUSD == nil) || (a.CostUSD != nil && *a.CostUSD != *b.CostUSD) {
		return false
	}
	if a.Question == nil || b.Question == nil {
		return a.Question == b.Question
	}
	return reflect.DeepEqual(*a.Question, *b.Question)
}

// compare reads the units and sends an EventTask for each that changed
// since the last comparison (every unit the first time); a unit that is
// gone, or a read that fails, sends an EventResync. Lagging subscribers
// get their EventResync here once they have room.
func (h *hub) compare() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	infos, err := h.c.Tasks(ctx)
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if s.lagged {
			h.resyncLocked(s)
		}
	}
	if err != nil {
		return // an edit in progress, most likely: the next poll reads it
	}
	first := h.prev == nil
	if first {
		h.prev = make(map[string]TaskInfo, len(infos))
	}
	last := len(h.prev)
	known := 0 // units of infos that were there last time
	for _, ti := range infos {
		old, ok := h.prev[ti.ID]
		if ok {
			known++
		}
		if first || !ok || !sameTask(old, ti) {
			h.prev[ti.ID] = ti
			changed := ti // a copy of its own, so that ti does not escape
			h.publishLocked(Event{Kind: EventTask, Unit: ti.ID, Task: &changed, Time: h.noticed[ti.ID]})
		}
	}
	if known < last { // some unit is gone
		h.publishLocked(Event{Kind: EventResync})
		clear(h.prev)
		for _, ti := range infos {
			h.prev[ti.ID] = ti
		}
	}
	clear(h.noticed)
}
