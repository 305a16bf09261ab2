\if TRUE
\elif 1 < < 2
\endif
