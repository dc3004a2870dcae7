module example.com/veterr

go 1.26
