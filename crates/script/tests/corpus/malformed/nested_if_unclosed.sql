\if TRUE
\if FALSE
\endif
