module example.com/failtest

go 1.26
