\if TRUE
\else x
\endif
