package tasks_test

import (
	"fmt"

	"github.com/statgraph/statgraph/tasks"
)

func ExampleParse() {
	data := []byte(`{
  "tasks": [
    {"id": 1, "title": "Parse flags", "dependencies": [2]},
    {"id": 2, "title": "Read config", "dependencies": [1]}
  ]
}`)
	_, err := tasks.Parse("tasks.json", data, "")
	fmt.Println(err)
	// Output:
	// tasks.json:3:55: task 1: dependency cycle: 1 -> 2 -> 1; remove one of these dependencies
}

func ExampleNext() {
	f, err := tasks.Parse("tasks.json", []byte(`{"tasks": [
		{"id": 1, "title": "Build"},
		{"id": 2, "title": "Test", "dependencies": [1], "subtasks": [
			{"id": 1, "title": "Unit tests"},
			{"id": 2, "title": "Integration tests", "dependencies": [1]}
		]},
		{"id": 3, "title": "Release", "dependencies": [2]}
	]}`), "")
	if err != nil {
		fmt.Println(err)
		return
	}
	units := f.Units()
	fmt.Println(tasks.Next(units, nil).Ready)
	fmt.Println(tasks.Next(units, map[string]string{"1": "done"}).Ready)
	fmt.Println(tasks.Next(units, map[string]string{"1": "done", "2.1": "failed"}).Blocked)
	// Output:
	// [1]
	// [2.1]
	// [{2.2 dependency 2.1 failed} {3 dependency 2.1 failed}]
}
