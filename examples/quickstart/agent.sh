#!/bin/sh
# A stand-in for a coding agent (aider, codex, claude...), so the quickstart
# runs offline with nothing to configure. statgraph runs it in the task's
# workspace as: agent.sh <prompt_file> <task_id> <attempt>
# The prompt file holds the task, the plan, "Attempt k of N" and, on a retry,
# the verifier's feedback with the failing tests named.
prompt=$1 task=$2 attempt=$3
case $task in
1)
	# Like a real agent, it only finds the bug once the feedback names the
	# failing test, so the first attempt fails and the second passes.
	if grep -q 'TestAdd' "$prompt"; then
		sed -i 's/return a - b/return a + b/' calc/calc.go
		echo "attempt $attempt: fixed Add after reading the TestAdd failure"
	else
		echo "// reviewed on attempt $attempt" >> calc/calc.go
		echo "attempt $attempt: looked around, changed nothing that matters"
	fi
	;;
*)
	# This one never finds the fix: the task runs out of retries.
	echo "// tried something on attempt $attempt" >> calc/calc.go
	echo "attempt $attempt: tried, without luck"
	;;
esac
