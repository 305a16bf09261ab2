\set x (1 + \
  foo(2))
