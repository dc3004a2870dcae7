package tests

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxREADMEBytes is the README's budget: what statgraph is, the set-up
// commands, the quickstart, the command table and links into docs/.
const maxREADMEBytes = 12 << 10

// docFiles returns the module's documentation that links are checked in,
// relative to the module root: the READMEs, DEVELOPERS.md and docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "DEVELOPERS.md", "tests/bench/README.md"}
	more, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, more, "docs/ holds the documentation README.md links to")
	examples, err := filepath.Glob(filepath.Join(root, "examples", "*", "README.md"))
	require.NoError(t, err)
	more = append(more, examples...)
	for _, f := range more {
		rel, err := filepath.Rel(root, f)
		require.NoError(t, err)
		files = append(files, rel)
	}
	return files
}

// TestDocsREADMESize fails when README.md outgrows its budget.
func TestDocsREADMESize(t *testing.T) {
	fi, err := os.Stat(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	assert.LessOrEqual(t, fi.Size(), int64(maxREADMEBytes),
		"README.md is %d bytes, over its %d: move the detail into docs/ and link to it", fi.Size(), maxREADMEBytes)
}

// mdLink matches a markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// codeSpan matches inline code, whose brackets are Go, not links.
var codeSpan = regexp.MustCompile("`[^`]*`")

// markdown is what TestDocsLinks needs of one file: its links and the
// anchors of its headings, both outside fenced code blocks.
type markdown struct {
	links   []string
	anchors map[string]bool
}

func readMarkdown(t *testing.T, path string) markdown {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	md := markdown{anchors: map[string]bool{}}
	fenced := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if strings.HasPrefix(line, "#") {
			md.anchors[anchorOf(strings.TrimLeft(line, "#"))] = true
		}
		for _, m := range mdLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, "``"), -1) {
			md.links = append(md.links, m[1])
		}
	}
	require.NoError(t, sc.Err())
	return md
}

// anchorOf returns the anchor GitHub gives a heading: lower case, spaces
// as hyphens, punctuation other than '-' and '_' dropped.
func anchorOf(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestDocsLinks fails when a relative link in the documentation names a
// file that does not exist, or a heading its target does not have.
func TestDocsLinks(t *testing.T) {
	parsed := map[string]markdown{}
	parse := func(rel string) markdown {
		if md, ok := parsed[rel]; ok {
			return md
		}
		md := readMarkdown(t, filepath.Join(root, rel))
		parsed[rel] = md
		return md
	}
	for _, doc := range docFiles(t) {
		for _, link := range parse(doc).links {
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			target, anchor, _ := strings.Cut(link, "#")
			rel := doc
			if target != "" {
				rel = filepath.ToSlash(filepath.Join(filepath.Dir(doc), target))
				if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
					t.Errorf("%s: the link %q points at %s, which does not exist", doc, link, rel)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(rel, ".md") && !parse(rel).anchors[anchor] {
				t.Errorf("%s: the link %q names the heading #%s, which %s does not have", doc, link, anchor, rel)
			}
		}
	}
}

// usageCommand matches a command line of the binary's usage text.
var usageCommand = regexp.MustCompile(`^  statgraph ([a-z]+)`)

// helpFlag matches a flag line of a command's -h output.
var helpFlag = regexp.MustCompile(`^  -([a-z][a-z-]*)`)

// docFlag matches a flag written in docs/cli.md: -j, --tag.
var docFlag = regexp.MustCompile(`-{1,2}[a-z][a-z-]*`)

// documentedFlags returns the flags docs/cli.md gives the command line
// (e.g. "statgraph sandbox check"): those on its synopsis line, and, when
// that line says "[run flags]", those of the table of run's flags.
func documentedFlags(t *testing.T, cli, line string) map[string]bool {
	t.Helper()
	flags := map[string]bool{}
	var synopsis string
	for _, l := range strings.Split(cli, "\n") {
		if l == line || strings.HasPrefix(l, line+" ") {
			synopsis = l
			break
		}
	}
	require.NotEmpty(t, synopsis, "docs/cli.md has no synopsis line for %s", line)
	for _, f := range docFlag.FindAllString(synopsis, -1) {
		flags[f] = true
	}
	if strings.Contains(synopsis, "[run flags]") {
		for _, l := range strings.Split(cli, "\n") {
			if strings.HasPrefix(l, "| `-") {
				for _, f := range docFlag.FindAllString(l, -1) {
					flags[f] = true
				}
			}
		}
	}
	return flags
}

// TestDocsCommandsAndFlags fails when a command of statgraph help is
// missing from README.md's table, or one of its flags from docs/cli.md.
func TestDocsCommandsAndFlags(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	cli, err := os.ReadFile(filepath.Join(root, "docs", "cli.md"))
	require.NoError(t, err)
	out, err := exec.Command(bin, "help").Output()
	require.NoError(t, err)
	var commands []string
	for _, line := range strings.Split(string(out), "\n") {
		if m := usageCommand.FindStringSubmatch(line); m != nil {
			commands = append(commands, m[1])
		}
	}
	require.Contains(t, commands, "run", "statgraph help lists the commands")
	for _, cmd := range commands {
		words := []string{cmd}
		if cmd == "sandbox" {
			words = append(words, "check")
		}
		line := "statgraph " + strings.Join(words, " ")
		assert.Contains(t, string(readme), "`"+line, "README.md's command table lacks %s", line)
		documented := documentedFlags(t, string(cli), line)
		help, _ := exec.Command(bin, append(words, "-h")...).CombinedOutput()
		for _, l := range strings.Split(string(help), "\n") {
			m := helpFlag.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			flag := "--" + m[1]
			if len(m[1]) == 1 {
				flag = "-" + m[1]
			}
			assert.True(t, documented[flag], "docs/cli.md does not give %s the flag %s", line, flag)
		}
	}
}
