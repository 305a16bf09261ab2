\SET x 1 +
