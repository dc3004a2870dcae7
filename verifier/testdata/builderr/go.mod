module example.com/builderr

go 1.26
