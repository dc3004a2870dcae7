package gate

// This file words the feedback a gate gives the node it retries.

import (
	"strconv"
	"strings"
)

// feedback writes a retry's feedback: one section per failed check, then
// the attempt line (attempt k of n, or all n failed when k is 0) and the
// gate's improvement hints.
func feedback(gate string, failed []Verdict, hints []string, k, n int, after string) string {
	var b strings.Builder
	size := 96 + len(gate) + len(after)
	for _, v := range failed {
		size += len(v.Validator) + len(v.Feedback) + len(v.Evidence) + 16
		for _, h := range v.Hints {
			size += len(h) + 3
		}
	}
	for _, h := range hints {
		size += len(h) + 3
	}
	b.Grow(size)
	for _, v := range failed {
		b.WriteByte('[')
		b.WriteString(v.Validator)
		b.WriteString("] ")
		b.WriteString(strings.TrimSpace(v.Feedback))
		b.WriteByte('\n')
		if v.Evidence != "" {
			b.WriteString("Evidence:\n")
			b.WriteString(strings.TrimRight(v.Evidence, "\n"))
			b.WriteByte('\n')
		}
		for _, h := range v.Hints {
			b.WriteString("- ")
			b.WriteString(h)
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	if k > 0 {
		b.WriteString("Attempt ")
		b.WriteString(strconv.Itoa(k))
		b.WriteString(" of ")
	} else {
		b.WriteString("All ")
	}
	b.WriteString(strconv.Itoa(n))
	if k == 0 {
		b.WriteString(" attempts failed")
	}
	b.WriteString(after)
	b.WriteString(" at gate \"")
	b.WriteString(gate)
	b.WriteString("\": ")
	b.WriteString(strconv.Itoa(len(failed)))
	b.WriteString(" blocking check(s) failed.")
	if len(hints) > 0 {
		b.WriteString("\nConsider these improvements:")
		for _, h := range hints {
			b.WriteString("\n- ")
			b.WriteString(h)
		}
	}
	return b.String()
}
