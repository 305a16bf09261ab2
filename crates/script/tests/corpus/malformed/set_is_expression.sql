\set x debug(TRUE) IS debug(TRUE)
