module tenure

go 1.19
