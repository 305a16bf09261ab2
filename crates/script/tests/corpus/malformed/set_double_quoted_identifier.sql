\set x "ab""c" + 1
