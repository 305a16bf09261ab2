\set x hash()
