\set x greatest()
