package obs_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/statgraph/statgraph/internal/obs"
)

type parentKey struct{}

// TestStart: without a hook Start changes nothing; with one, each
// operation is started under the one whose ctx it was given and ended with
// its error and late attributes.
func TestStart(t *testing.T) {
	ctx := context.Background()
	if obs.Enabled(ctx) {
		t.Fatal("Enabled without a hook")
	}
	got, end := obs.Start(ctx, "x")
	if got != ctx {
		t.Fatal("Start without a hook changed ctx")
	}
	end(errors.New("ignored"))

	var log []string
	ctx = obs.With(ctx, func(ctx context.Context, name string, attrs []obs.Attr) (context.Context, obs.End) {
		parent, _ := ctx.Value(parentKey{}).(string)
		log = append(log, fmt.Sprintf("start %s under %q %v", name, parent, attrs))
		return context.WithValue(ctx, parentKey{}, name), func(err error, attrs ...obs.Attr) {
			log = append(log, fmt.Sprintf("end %s %v %v", name, err, attrs))
		}
	})
	if !obs.Enabled(ctx) {
		t.Fatal("not Enabled with a hook")
	}
	outer, endOuter := obs.Start(ctx, "outer", obs.String("k", "v"))
	_, endInner := obs.Start(outer, "inner")
	endInner(errors.New("boom"), obs.Int("n", 1))
	endOuter(nil, obs.Bool("ok", true))
	want := []string{
		`start outer under "" [{k v}]`,
		`start inner under "outer" []`,
		`end inner boom [{n 1}]`,
		`end outer <nil> [{ok true}]`,
	}
	if fmt.Sprint(log) != fmt.Sprint(want) {
		t.Fatalf("got %q; want %q", log, want)
	}
}
