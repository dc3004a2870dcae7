package gate

// This file merges the State updates of nodes that run in one super-step.

import "slices"

// Merge is the reducer of a State field, for graphs whose validators or
// gates run in parallel (a graph with a reducer, see
// statgraph.Builder.SetReducer). A validator's update adds its verdict to
// cur's (and its kept verdict, see InputKey), replacing that validator's
// earlier one. The first gate deciding in a step replaces cur; another
// gate deciding in the same step is joined in: its count, outcome, log
// entries and warnings are added, and the verdicts it weighed removed.
// When gates decide together the most restrictive decision wins (a failure
// over a retry over a pass or skip): the others' routers take no route,
// and State.Feedback is the winners' feedback. An update from any other
// node adds its verdicts to cur's, as before validators ran in parallel.
// Merge does not write into cur's or update's slices.
func Merge(cur, update State) State {
	switch {
	case update.Decisions > cur.Decisions:
		return carryVerdicts(update, cur)
	case update.by != "":
		return mergeValidator(cur, update)
	case update.Decisions < cur.Decisions:
		return cur // update's verdicts predate the decision that consumed them
	}
	for _, o := range update.Last {
		if o.Round == update.Decisions && o.Round > 0 {
			if c, ok := cur.Outcome(o.Gate); !ok || c.Round != o.Round {
				return joinGate(cur, update, o)
			}
		}
	}
	if len(update.Verdicts) == 0 {
		return cur
	}
	vs := cur.Verdicts
	for _, v := range update.Verdicts {
		vs = putVerdict(vs, v)
	}
	cur.Verdicts = vs
	return cur
}

// carryVerdicts returns a gate's update with the verdicts (and kept
// verdicts) cur holds from validators of other gates that ran in the same
// step and were merged before it.
func carryVerdicts(update, cur State) State {
	update.by = ""
	var weighed []Verdict
	for _, o := range update.Last {
		if o.Round == update.Decisions {
			weighed = append(weighed, o.Verdicts...)
		}
	}
	for _, v := range cur.Verdicts {
		if verdictOf(weighed, v.Validator) < 0 && !slices.ContainsFunc(update.Verdicts, func(w Verdict) bool { return sameVerdict(v, w) }) {
			update.Verdicts = putVerdict(update.Verdicts, v)
		}
	}
	for _, v := range cur.Kept {
		if !slices.ContainsFunc(update.Kept, func(w Verdict) bool { return sameVerdict(v, w) }) {
			update.Kept = putVerdict(update.Kept, v)
		}
	}
	return update
}

// sameVerdict reports whether a and b are the same recorded verdict.
func sameVerdict(a, b Verdict) bool {
	return a.Validator == b.Validator && a.Passed == b.Passed && a.Feedback == b.Feedback &&
		a.Evidence == b.Evidence && a.Key == b.Key && a.Reused == b.Reused
}

// mergeValidator adds the verdict of the validator that made update.
func mergeValidator(cur, update State) State {
	if i := verdictOf(update.Verdicts, update.by); i >= 0 {
		cur.Verdicts = putVerdict(cur.Verdicts, update.Verdicts[i])
	}
	if i := verdictOf(update.Kept, update.by); i >= 0 {
		cur.Kept = putVerdict(cur.Kept, update.Kept[i])
	}
	cur.by = ""
	return cur
}

// joinGate adds to cur the decision o of a second gate deciding in the
// same step, whose whole state is update.
func joinGate(cur, update State, o Outcome) State {
	cur.by = ""
	if i := update.count(o.Gate); i >= 0 {
		counts := slices.DeleteFunc(slices.Clone(cur.Counts), func(c Count) bool { return c.Gate == o.Gate })
		cur.Counts = append(counts, update.Counts[i])
	}
	last := slices.DeleteFunc(slices.Clone(cur.Last), func(l Outcome) bool { return l.Gate == o.Gate })
	cur.Last = append(last, o)
	if len(o.Warnings) > 0 {
		cur.Warnings = append(slices.Clip(cur.Warnings), o.Warnings...)
	}
	cur.Verdicts = slices.DeleteFunc(slices.Clone(cur.Verdicts), func(v Verdict) bool {
		return slices.ContainsFunc(o.Verdicts, func(w Verdict) bool { return w.Validator == v.Validator })
	})
	tries := slices.DeleteFunc(slices.Clone(cur.Tries), func(a Attempt) bool { return a.Gate == o.Gate })
	for _, a := range update.Tries {
		if a.Gate == o.Gate {
			tries = append(tries, a)
		}
	}
	cur.Tries = tries
	// The feedback is the most restrictive decision's; equal ones join.
	top := -1
	for _, l := range cur.Last {
		if l.Round == o.Round && l.Gate != o.Gate {
			top = max(top, restrictive(l.Decision))
		}
	}
	switch r := restrictive(o.Decision); {
	case r > top:
		cur.Feedback = update.Feedback
	case r == top && update.Feedback != "" && cur.Feedback != "":
		cur.Feedback += "\n\n" + update.Feedback
	}
	return cur
}

// restrictive ranks a decision: a failure over a retry over a pass.
func restrictive(d Decision) int {
	switch d {
	case Failed, Aborted:
		return 3
	case Escalate:
		return 2
	case Retry, Reset:
		return 1
	}
	return 0
}

// outranked reports whether another gate deciding in the same round as o
// decided something more restrictive.
func (st *State) outranked(o Outcome) bool {
	r := restrictive(o.Decision)
	for _, l := range st.Last {
		if l.Round == o.Round && l.Gate != o.Gate && restrictive(l.Decision) > r {
			return true
		}
	}
	return false
}
