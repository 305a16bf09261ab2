SELECT 1 AS a \aset p q
