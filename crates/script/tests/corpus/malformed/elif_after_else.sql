\if TRUE
\else
\elif FALSE
\endif
