package llm

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

// FileSystem is the workspace the executor's tools act on. Paths are
// relative to the workspace root; an implementation refuses paths that leave
// it (such as "../outside.txt") and writes to .git with an error, which the
// executor hands back to the model. Its methods may be called from one
// goroutine at a time.
type FileSystem interface {
	// ListFiles returns up to max file paths under dir ("." for the root).
	ListFiles(dir string, max int) ([]string, error)
	// ReadFile returns the content of the file at path.
	ReadFile(path string) (string, error)
	// Search returns up to max matches of pattern as "path:line: text".
	Search(pattern string, max int) ([]string, error)
	// WriteFile creates or replaces the file at path with content.
	WriteFile(path, content string) error
	// ReplaceInFile replaces the one occurrence of old in the file at path
	// with new; it fails if old occurs zero times or more than once.
	ReplaceInFile(path, old, new string) error
}

// Tool names offered to the model.
const (
	toolListFiles     = "list_files"
	toolReadFile      = "read_file"
	toolSearch        = "search"
	toolWriteFile     = "write_file"
	toolReplaceInFile = "replace_in_file"
	toolFinish        = "finish"
)

// Defaults and caps of the "max" argument of list_files and search.
const (
	defaultListMax, capListMax     = 200, 1000
	defaultSearchMax, capSearchMax = 50, 500
)

// executorTools are the function tools of the executor, with JSON schemas.
var executorTools = []openai.Tool{
	tool(toolListFiles, "List files under a directory of the repository, recursively.",
		`{"type":"object","properties":{"dir":{"type":"string","description":"directory relative to the repository root; \".\" for the root"},"max":{"type":"integer","description":"maximum number of paths (default 200)"}},"required":["dir"]}`),
	tool(toolReadFile, "Read a file of the repository.",
		`{"type":"object","properties":{"path":{"type":"string","description":"file path relative to the repository root"}},"required":["path"]}`),
	tool(toolSearch, "Search the repository's files for a regular expression; returns path:line: text matches.",
		`{"type":"object","properties":{"pattern":{"type":"string","description":"regular expression (RE2 syntax)"},"max":{"type":"integer","description":"maximum number of matches (default 50)"}},"required":["pattern"]}`),
	tool(toolWriteFile, "Create or overwrite a file with the given content.",
		`{"type":"object","properties":{"path":{"type":"string","description":"file path relative to the repository root"},"content":{"type":"string","description":"the complete new content of the file"}},"required":["path","content"]}`),
	tool(toolReplaceInFile, "Replace exactly one occurrence of a text in a file. Include enough context in old to make it unique.",
		`{"type":"object","properties":{"path":{"type":"string","description":"file path relative to the repository root"},"old":{"type":"string","description":"the exact text to replace; must occur exactly once"},"new":{"type":"string","description":"the replacement text"}},"required":["path","old","new"]}`),
	tool(toolFinish, "Call when the task is done, with a short summary of what you changed.",
		`{"type":"object","properties":{"summary":{"type":"string","description":"what was changed and why"}},"required":["summary"]}`),
}

func tool(name, description, schema string) openai.Tool {
	return openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: name, Description: description, Parameters: json.RawMessage(schema),
	}}
}

// toolArgs holds the arguments of any executor tool.
type toolArgs struct {
	Dir     string `json:"dir"`
	Path    string `json:"path"`
	Pattern string `json:"pattern"`
	Max     int    `json:"max"`
	Content string `json:"content"`
	Old     string `json:"old"`
	New     string `json:"new"`
	Summary string `json:"summary"`
}

// runTool runs one tool call other than finish on fsys and returns its
// result for the model: the output, or "error: ..." if the call failed.
func runTool(fsys FileSystem, call openai.ToolCall) string {
	out, err := dispatch(fsys, call)
	if err != nil {
		return "error: " + err.Error()
	}
	return out
}

func dispatch(fsys FileSystem, call openai.ToolCall) (string, error) {
	name := call.Function.Name
	var a toolArgs
	if strings.TrimSpace(call.Function.Arguments) != "" {
		if err := json.Unmarshal([]byte(call.Function.Arguments), &a); err != nil {
			return "", fmt.Errorf("%s: arguments are not a valid JSON object: %v", name, err)
		}
	}
	switch name {
	case toolListFiles:
		if a.Dir == "" {
			a.Dir = "."
		}
		files, err := fsys.ListFiles(a.Dir, clampMax(a.Max, defaultListMax, capListMax))
		if err != nil {
			return "", fmt.Errorf("list_files %q: %w", a.Dir, err)
		}
		return lines(files, "(no files)"), nil
	case toolReadFile:
		if a.Path == "" {
			return "", fmt.Errorf("read_file: the path argument is required")
		}
		content, err := fsys.ReadFile(a.Path)
		if err != nil {
			return "", fmt.Errorf("read_file %q: %w", a.Path, err)
		}
		if content == "" {
			return "(empty file)", nil
		}
		return content, nil
	case toolSearch:
		if a.Pattern == "" {
			return "", fmt.Errorf("search: the pattern argument is required")
		}
		matches, err := fsys.Search(a.Pattern, clampMax(a.Max, defaultSearchMax, capSearchMax))
		if err != nil {
			return "", fmt.Errorf("search %q: %w", a.Pattern, err)
		}
		return lines(matches, "(no matches)"), nil
	case toolWriteFile:
		if a.Path == "" {
			return "", fmt.Errorf("write_file: the path argument is required")
		}
		if err := fsys.WriteFile(a.Path, a.Content); err != nil {
			return "", fmt.Errorf("write_file %q: %w", a.Path, err)
		}
		return fmt.Sprintf("wrote %d bytes to %s", len(a.Content), a.Path), nil
	case toolReplaceInFile:
		if a.Path == "" || a.Old == "" {
			return "", fmt.Errorf("replace_in_file: the path and old arguments are required")
		}
		if err := fsys.ReplaceInFile(a.Path, a.Old, a.New); err != nil {
			return "", fmt.Errorf("replace_in_file %q: %w", a.Path, err)
		}
		return "replaced 1 occurrence in " + a.Path, nil
	default:
		return "", fmt.Errorf("unknown tool %q; the tools are list_files, read_file, search, write_file, replace_in_file and finish", name)
	}
}

// finishSummary returns the summary argument of a finish call, or its raw
// arguments if they do not parse.
func finishSummary(call openai.ToolCall) string {
	var a toolArgs
	if err := json.Unmarshal([]byte(call.Function.Arguments), &a); err != nil || a.Summary == "" {
		return strings.TrimSpace(call.Function.Arguments)
	}
	return a.Summary
}

func clampMax(n, def, ceiling int) int {
	if n <= 0 {
		return def
	}
	return min(n, ceiling)
}

func lines(items []string, empty string) string {
	if len(items) == 0 {
		return empty
	}
	return strings.Join(items, "\n")
}

// capOutput keeps the first max bytes of s (cut at a rune boundary) and says
// how much was dropped.
func capOutput(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%s\n[output truncated: %d of %d bytes shown; use search or a narrower request for the rest]", s[:n], n, len(s))
}
