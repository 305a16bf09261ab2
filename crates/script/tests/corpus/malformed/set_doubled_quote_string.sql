\set x 1 + 'a''b'
