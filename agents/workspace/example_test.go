package workspace_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/statgraph/statgraph/agents/workspace"
)

// newRepo makes a repository with one commit of hello.txt.
func newRepo() string {
	dir, err := os.MkdirTemp("", "example-source-")
	if err != nil {
		log.Fatal(err)
	}
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello\n"), 0o644); err != nil {
		log.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		log.Fatal(err)
	}
	if _, err := wt.Add("hello.txt"); err != nil {
		log.Fatal(err)
	}
	sig := &object.Signature{Name: "Example", Email: "example@example.com", When: time.Unix(0, 0)}
	if _, err := wt.Commit("initial", &git.CommitOptions{Author: sig}); err != nil {
		log.Fatal(err)
	}
	return dir
}

func ExamplePrepare() {
	ctx := context.Background()
	source := newRepo()
	defer os.RemoveAll(source)

	ws, err := workspace.Prepare(ctx, workspace.Options{Source: source, TaskID: "3.2"})
	if err != nil {
		log.Fatal(err)
	}
	defer ws.Close()
	if err := ws.FS().ReplaceInFile("hello.txt", "hello", "hello, world"); err != nil {
		log.Fatal(err)
	}
	if _, _, err := ws.Commit(ctx, 1, "greet the world"); err != nil {
		log.Fatal(err)
	}
	diff, err := ws.Diff(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(diff)
	if err := ws.Finish(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("published", ws.Branch())
	// Output:
	// diff --git a/hello.txt b/hello.txt
	// index ce013625030ba8dba906f756967f9e9ca394464a..4b5fa63702dd96796042e92787f464e28f09f17d 100644
	// --- a/hello.txt
	// +++ b/hello.txt
	// @@ -1 +1 @@
	// -hello
	// +hello, world
	// published statgraph/3.2
}

func ExampleFS() {
	dir, err := os.MkdirTemp("", "example-fs-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	fsys, err := workspace.OpenFS(dir, workspace.FSOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(fsys.WriteFile("pkg/a.go", "package pkg\n\nfunc A() int { return 1 }\n"))
	fmt.Println(fsys.WriteFile("../escape.txt", "x"))
	fmt.Println(fsys.WriteFile(".git/hooks/pre-commit", "x"))
	fmt.Println(fsys.ReplaceInFile("pkg/a.go", "return 2", "return 3"))
	files, _ := fsys.ListFiles("", 0)
	fmt.Println(files)
	hits, _ := fsys.Search(`func \w+\(`, 0)
	fmt.Println(hits)
	// Output:
	// <nil>
	// write ../escape.txt: path escapes the workspace; use a path relative to the workspace root
	// write .git/hooks/pre-commit: path is inside .git, which agents may not read or change; work on the files of the working tree instead
	// replace in pkg/a.go: the old text must occur exactly once, found 0 times; copy the text exactly from ReadFile, including whitespace and indentation
	// [pkg/ pkg/a.go (39 bytes)]
	// [pkg/a.go:3: func A() int { return 1 }]
}
