\elif TRUE
