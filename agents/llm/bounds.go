package llm

// bounds.go holds the executor's per-attempt caps against a hostile or
// broken model: how many tool calls of one turn run, how large the kept
// conversation may grow, and how much one attempt may write.

import (
	"fmt"
	"path"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// Defaults of the executor's per-attempt caps (see [ExecRequest]).
const (
	// DefaultMaxToolCallsPerTurn is how many tool calls of one model reply
	// run; the rest are answered with an error.
	DefaultMaxToolCallsPerTurn = 64
	// DefaultMaxConversationBytes is the size past which older tool results
	// and tool-call arguments are elided from the conversation sent back.
	DefaultMaxConversationBytes = 1 << 20
	// DefaultMaxWriteBytes and DefaultMaxWriteFiles cap what one attempt
	// writes through write_file and replace_in_file.
	DefaultMaxWriteBytes = 50 << 20
	DefaultMaxWriteFiles = 2000
)

// elidedMarker starts every tool result or argument that was elided.
const elidedMarker = "[elided: "

// skippedCall is the tool result of a call past the per-turn cap. The first
// skipped call of a turn gets the full explanation; the others point to it.
func skippedCall(n, max int, first string, isFirst bool) string {
	if isFirst {
		return fmt.Sprintf("error: not run: this reply made %d tool calls and at most %d run per turn, so calls %d to %d were skipped "+
			"(the cap is limits.tool_calls_per_turn in tasks.json). Repeat the calls you still need in later turns, at most %d at a time.",
			n, max, max+1, n, max)
	}
	return fmt.Sprintf("error: not run: over the cap of %d tool calls per turn (see the result of call %s)", max, first)
}

// messageBytes is the size a message adds to a request, near enough: its
// content and its tool calls' arguments.
func messageBytes(m openai.ChatCompletionMessage) int {
	n := len(m.Content)
	for _, tc := range m.ToolCalls {
		n += len(tc.Function.Arguments) + len(tc.Function.Name) + len(tc.ID)
	}
	return n
}

// trimConversation elides, oldest first, the tool results and then the
// tool-call arguments of msgs until their total size is at most max bytes.
// It never touches the first keep messages (the system prompt and the task)
// nor the messages from the last assistant reply on, which the model needs
// to see whole. Elided text is replaced by a marker saying how much was
// dropped and that a later read can fetch it again. It edits msgs in place.
func trimConversation(msgs []openai.ChatCompletionMessage, keep, max int) {
	total := 0
	for _, m := range msgs {
		total += messageBytes(m)
	}
	if total <= max {
		return
	}
	last := len(msgs)
	for i := len(msgs) - 1; i >= keep; i-- {
		if msgs[i].Role == openai.ChatMessageRoleAssistant {
			last = i
			break
		}
	}
	marker := func(n int) string {
		return fmt.Sprintf("%s%d bytes dropped to keep the conversation under %s; read the file again if you need it]", elidedMarker, n, formatSize(int64(max)))
	}
	for i := keep; i < last && total > max; i++ {
		m := &msgs[i]
		if m.Role != openai.ChatMessageRoleTool || strings.HasPrefix(m.Content, elidedMarker) {
			continue
		}
		short := marker(len(m.Content))
		if len(short) < len(m.Content) {
			total -= len(m.Content) - len(short)
			m.Content = short
		}
	}
	for i := keep; i < last && total > max; i++ {
		m := &msgs[i]
		if m.Role != openai.ChatMessageRoleAssistant {
			continue
		}
		for j := range m.ToolCalls {
			args := m.ToolCalls[j].Function.Arguments
			const elidedArgs = "{}"
			if len(args) <= len(elidedArgs) {
				continue
			}
			total -= len(args) - len(elidedArgs)
			m.ToolCalls[j].Function.Arguments = elidedArgs
		}
	}
}

// limitFS counts what one attempt writes through a FileSystem and refuses
// writes past its caps. Like the FileSystem it wraps, it is used by one
// goroutine at a time.
type limitFS struct {
	FileSystem
	maxBytes, maxFiles int
	bytes              int             // content bytes written so far
	files              map[string]bool // distinct paths written so far
}

func newLimitFS(fsys FileSystem, maxBytes, maxFiles int) *limitFS {
	return &limitFS{FileSystem: fsys, maxBytes: maxBytes, maxFiles: maxFiles, files: map[string]bool{}}
}

// admit checks a write of n bytes to path against the caps and counts it.
func (l *limitFS) admit(name string, n int) error {
	if !l.files[path.Clean(name)] && len(l.files) >= l.maxFiles {
		return fmt.Errorf("not written: this attempt has already written %d files, the cap per attempt (limits.write_files in tasks.json); "+
			"change the files you have, or call finish", len(l.files))
	}
	if l.bytes+n > l.maxBytes {
		return fmt.Errorf("not written: %s more would pass the cap of %s written per attempt (limits.write_bytes in tasks.json; %s written so far); "+
			"make smaller changes, or call finish", formatSize(int64(n)), formatSize(int64(l.maxBytes)), formatSize(int64(l.bytes)))
	}
	return nil
}

func (l *limitFS) record(name string, n int) {
	l.files[path.Clean(name)] = true
	l.bytes += n
}

// WriteFile writes through the wrapped FileSystem if the caps allow.
func (l *limitFS) WriteFile(path, content string) error {
	if err := l.admit(path, len(content)); err != nil {
		return err
	}
	if err := l.FileSystem.WriteFile(path, content); err != nil {
		return err
	}
	l.record(path, len(content))
	return nil
}

// ReplaceInFile replaces through the wrapped FileSystem if the caps allow;
// it counts the replacement text as written.
func (l *limitFS) ReplaceInFile(path, old, new string) error {
	if err := l.admit(path, len(new)); err != nil {
		return err
	}
	if err := l.FileSystem.ReplaceInFile(path, old, new); err != nil {
		return err
	}
	l.record(path, len(new))
	return nil
}
