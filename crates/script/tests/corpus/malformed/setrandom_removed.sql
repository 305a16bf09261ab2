\setrandom x 1 10
