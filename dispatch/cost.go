package dispatch

// This file says what the run's cost accounting cannot count.

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/tasks"
)

// notePrices writes to Log, once per run, the models of the units that may
// run that have no price (their tokens' cost shows as unknown, never as
// $0) and the agent CLIs that report no cost of their own and whose model
// has no price.
func (d *Dispatcher) notePrices() {
	if d.Log == nil {
		return
	}
	prices := d.priceTable()
	models := map[string][]string{} // model -> units
	clis := map[string][]string{}   // preset -> units
	usd := d.Budget.Limit().USD > 0
	for _, u := range d.File.Units() {
		t, ok := d.File.Task(u.ID)
		if !ok || !tasks.Runnable(t.Status) {
			continue
		}
		usd = usd || t.BudgetUSD != nil
		if model := cmp.Or(t.Model, d.Model.Model); model != "" {
			if _, ok := prices.Price(model); !ok {
				models[model] = append(models[model], u.ID)
			}
		}
		if p := t.Executor.Preset; p != "" && !agents.PresetReportsCost(p) {
			if _, ok := prices.Price(t.Model); !ok || t.Model == "" {
				clis[p] = append(clis[p], u.ID)
			}
		}
	}
	caveat := ""
	if usd {
		caveat = "; --budget-usd and budget_usd do not count them"
	}
	for _, m := range sortedKeys(models) {
		fmt.Fprintf(d.Log, "note: model %s has no price: the cost of its tokens (task %s) shows as unknown%s; "+
			"give it one in tasks.json's defaults.prices or a --prices file (docs/models-and-agents.md)\n", m, strings.Join(models[m], ", "), caveat)
	}
	for _, p := range sortedKeys(clis) {
		fmt.Fprintf(d.Log, "note: agent CLI %s reports tokens but no cost: the cost of task %s shows as unknown%s; "+
			"give the task the \"model\" its CLI uses, with a price, to price its tokens\n", p, strings.Join(clis[p], ", "), caveat)
	}
}

// isGlobalBudget reports whether err is a call the run's budget refused.
func isGlobalBudget(err error) bool {
	_, ok := llm.GlobalBudget(err)
	return ok
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
