\if TRUE
\else
\else
\endif
