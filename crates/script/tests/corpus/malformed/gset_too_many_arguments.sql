SELECT 1 AS a \gset p q
