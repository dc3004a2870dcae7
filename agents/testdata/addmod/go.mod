module example.com/addmod

go 1.22
