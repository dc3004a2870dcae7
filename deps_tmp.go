package main
import (
 _ "github.com/sashabaranov/go-openai"
 _ "github.com/go-git/go-git/v5"
 _ "github.com/stretchr/testify/require"
 _ "github.com/google/uuid"
 _ "modernc.org/sqlite"
 _ "golang.org/x/sync/errgroup"
 _ "go.uber.org/goleak"
)
func main(){}
