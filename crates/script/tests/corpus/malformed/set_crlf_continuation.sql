\set x 1 + \
  )
