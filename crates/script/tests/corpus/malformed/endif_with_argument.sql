\if TRUE
\endif now
